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
from dataclasses import dataclass

from collectors.kdump.snapshot import (
    DistroFamily,
    KdumpConfig,
    KdumpState,
    MemInfo,
    TargetKind,
    TextFile,
)
from detectors.kdump.crashkernel import (
    MIB,
    Estimate,
    describe_estimate,
    distro_default,
    estimate_crashkernel,
    parse_crashkernel,
)
from detectors.kdump.makedumpfile import (
    CollectorOptions,
    Compression,
    compression_support,
    excluded_classes,
    parse_collector,
)
from detectors.kdump.sysctl_rules import check_sysctls
from detectors.kdump.util import Line, Status, fail, file_evidence, pass_, warn
from forensics.model import NotAvailable

__all__ = ["RULES", "Checklist", "Line", "Status", "run_checklist"]

#: Debian's kdump-config and RHEL's kdumpctl defaults when the config sets no collector.
DEFAULT_COLLECTOR = {
    DistroFamily.DEBIAN: "makedumpfile -c -d 31",
    DistroFamily.RHEL: "makedumpfile -l --message-level 7 -d 31",
    DistroFamily.UNKNOWN: "makedumpfile -c -d 31",
}


@dataclass(frozen=True)
class Checklist:
    """All check lines, the verdicts and the crashkernel estimate."""

    lines: tuple[Line, ...]
    estimate: Estimate

    @property
    def ready(self) -> bool:
        """True when nothing fails: the next crash will be captured."""
        return all(line.status is not Status.FAIL for line in self.lines)

    @property
    def kernel_ready(self) -> bool:
        """True when the kernel side alone is ready (reservation made, crash kernel loaded)."""
        return all(line.status is not Status.FAIL for line in self.lines if line.kernel_side)

    def count(self, status: Status) -> int:
        """How many lines have ``status``."""
        return sum(1 for line in self.lines if line.status is status)


def _family(state: KdumpState) -> DistroFamily:
    """The tooling family, guessing from the config files present on an unknown distribution."""
    if state.distro.family is not DistroFamily.UNKNOWN:
        return state.distro.family
    if isinstance(state.debian_config, KdumpConfig) or state.tooling.kdump_config:
        return DistroFamily.DEBIAN
    if isinstance(state.rhel_config, KdumpConfig) or state.tooling.kdumpctl:
        return DistroFamily.RHEL
    return DistroFamily.UNKNOWN


def active_config(state: KdumpState) -> KdumpConfig | NotAvailable:
    """The configuration file the target's kdump tooling reads."""
    family = _family(state)
    if family is DistroFamily.DEBIAN:
        return state.debian_config
    if family is DistroFamily.RHEL:
        return state.rhel_config
    return NotAvailable("no kdump configuration file was found")


def collector_options(state: KdumpState) -> tuple[CollectorOptions, TextFile | None, int]:
    """The effective core collector, the file and line that set it (None, 0 for the default)."""
    family = _family(state)
    config = active_config(state)
    if isinstance(config, KdumpConfig):
        entry = config.get("MAKEDUMP_ARGS" if family is DistroFamily.DEBIAN else "core_collector")
        if entry is not None:
            return parse_collector(entry.value), config.file, entry.line
    return parse_collector(DEFAULT_COLLECTOR[family]), None, 0


def crashkernel_estimate(state: KdumpState) -> Estimate:
    """The recommended reservation for this system."""
    images = state.images
    default = distro_default(state.distro.id, state.arch)
    return estimate_crashkernel(
        state.system_ram_bytes, images.kernel_bytes, images.initrd_bytes, images.modules_bytes, default
    )


def _cmdline_crashkernel(state: KdumpState) -> str | None:
    if not isinstance(state.cmdline, TextFile):
        return None
    found = None
    for word in state.cmdline.first_line().split():
        if word.startswith("crashkernel="):
            found = word.removeprefix("crashkernel=")  # the kernel uses the last one
    return found


def check_distro(state: KdumpState, estimate: Estimate) -> list[Line]:
    """Which distribution, hence which kdump tooling to expect."""
    distro = state.distro
    evidence = file_evidence(state.os_release, distro.evidence_line)
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


def check_cmdline(state: KdumpState, estimate: Estimate) -> list[Line]:
    """crashkernel= on the running kernel's command line."""
    value = _cmdline_crashkernel(state)
    evidence = file_evidence(state.cmdline, 1, f"crashkernel={value}" if value else None)
    title = "crashkernel= on the kernel command line"
    if isinstance(state.cmdline, NotAvailable):
        return [fail("crashkernel-cmdline", title, str(state.cmdline), _WHY_RESERVE, _FIX_CRASHKERNEL, (), kernel=True)]
    if value is None:
        return [
            fail(
                "crashkernel-cmdline",
                title,
                "no crashkernel= parameter",
                _WHY_RESERVE,
                _FIX_CRASHKERNEL,
                evidence,
                kernel=True,
            )
        ]
    try:
        parsed = parse_crashkernel(value)
    except ValueError as exc:
        return [
            fail(
                "crashkernel-cmdline",
                title,
                f"crashkernel={value}: {exc}",
                _WHY_RESERVE,
                _FIX_CRASHKERNEL,
                evidence,
                kernel=True,
            )
        ]
    ram = state.system_ram_bytes
    if isinstance(ram, int):
        size = parsed.size_for(ram)
        if size == 0:
            detail = f"crashkernel={value} reserves nothing for {ram // MIB} MiB of RAM (no range matches)"
            return [fail("crashkernel-cmdline", title, detail, _WHY_RESERVE, _FIX_CRASHKERNEL, evidence, kernel=True)]
        return [
            pass_(
                "crashkernel-cmdline",
                title,
                f"crashkernel={value} ({size // MIB} MiB for {ram // MIB} MiB RAM)",
                evidence,
                kernel=True,
            )
        ]
    return [pass_("crashkernel-cmdline", title, f"crashkernel={value}", evidence, kernel=True)]


def check_boot_config(state: KdumpState, estimate: Estimate) -> list[Line]:
    """crashkernel= in the boot loader configuration, so it survives reboots and kernel updates."""
    title = "crashkernel= in the boot configuration"
    if state.boot.crashkernel:
        file, number, value = state.boot.crashkernel[-1]
        detail = f"{file.path} line {number} sets crashkernel={value}"
        return [pass_("crashkernel-boot", title, detail, file_evidence(file, number, f"crashkernel={value}"))]
    if not state.boot.files:
        detail = "no boot loader configuration found (/etc/default/grub, grub.d, BLS entries, /etc/kernel/cmdline)"
        return [warn("crashkernel-boot", title, detail, _WHY_PERSIST, _FIX_CRASHKERNEL, ())]
    file = state.boot.files[0]
    detail = f"none of {len(state.boot.files)} boot configuration file(s) sets crashkernel="
    return [warn("crashkernel-boot", title, detail, _WHY_PERSIST, _FIX_CRASHKERNEL, file_evidence(file, 1))]


def check_reservation(state: KdumpState, estimate: Estimate) -> list[Line]:
    """Memory actually reserved (/sys/kernel/kexec_crash_size) against the recommended size."""
    title = "Crash kernel memory reserved"
    file = state.crash_size
    if isinstance(file, NotAvailable):
        detail = f"{file.reason}: the kernel was built without kexec crash support (CONFIG_CRASH_DUMP)"
        fix = "boot a distribution kernel, or one built with CONFIG_KEXEC, CONFIG_CRASH_DUMP and CONFIG_PROC_VMCORE"
        return [fail("crash-reservation", title, detail, _WHY_RESERVE, fix, (), kernel=True)]
    text = file.first_line()
    evidence = file_evidence(file, 1, text)
    if not text.isdigit() or int(text) == 0:
        detail = f"{file.path} is {text!r}: nothing reserved"
        if _cmdline_crashkernel(state):
            detail += " although crashkernel= was given (too large for free low memory? see dmesg 'crashkernel')"
        return [fail("crash-reservation", title, detail, _WHY_RESERVE, _FIX_CRASHKERNEL, evidence, kernel=True)]
    reserved = int(text)
    want = describe_estimate(estimate)
    if reserved < estimate.recommended:
        detail = f"{reserved // MIB} MiB reserved, less than the recommended {want}"
        why = "a crash kernel short of memory runs out of memory while loading drivers or saving: no dump"
        fix = f"raise crashkernel= to {estimate.recommended // MIB}M: kforensic kdump setup --apply"
        return [warn("crash-reservation", title, detail, why, fix, evidence, kernel=True)]
    return [
        pass_("crash-reservation", title, f"{reserved // MIB} MiB reserved (recommended {want})", evidence, kernel=True)
    ]


def check_loaded(state: KdumpState, estimate: Estimate) -> list[Line]:
    """A crash kernel is loaded into the reservation (/sys/kernel/kexec_crash_loaded)."""
    title = "Crash kernel loaded"
    file = state.crash_loaded
    why = "without a loaded crash kernel a panic reboots or hangs and memory is lost"
    fix = _FIX_LOAD.get(_family(state), _FIX_LOAD[DistroFamily.UNKNOWN])
    if isinstance(file, NotAvailable):
        return [fail("crash-loaded", title, f"{file.reason}: kexec crash support missing", why, fix, (), kernel=True)]
    text = file.first_line()
    if text != "1":
        return [
            fail("crash-loaded", title, f"{file.path} is {text!r}", why, fix, file_evidence(file, 1, text), kernel=True)
        ]
    return [pass_("crash-loaded", title, f"{file.path} is 1", file_evidence(file, 1, text), kernel=True)]


def check_tooling(state: KdumpState, estimate: Estimate) -> list[Line]:
    """The distribution's kdump tooling and makedumpfile are installed."""
    title = "kdump tooling installed"
    tools = state.tooling
    family = _family(state)
    evidence = file_evidence(state.os_release, state.distro.evidence_line)
    why = "the tooling loads the crash kernel at boot and saves the dump after a crash"
    needed = {
        DistroFamily.DEBIAN: ("kdump-config", tools.kdump_config, "apt-get install kdump-tools"),
        DistroFamily.RHEL: ("kdumpctl", tools.kdumpctl, "dnf install kexec-tools (kdump-utils on Fedora 40+)"),
        DistroFamily.UNKNOWN: ("kdump-config or kdumpctl", tools.kdump_config or tools.kdumpctl, "install kexec-tools"),
    }[family]
    missing = [name for name, path in ((needed[0], needed[1]), ("makedumpfile", tools.makedumpfile)) if not path]
    if missing:
        return [fail("kdump-tooling", title, f"missing: {', '.join(missing)}", why, needed[2], evidence)]
    found = ", ".join(p for p in (needed[1], tools.makedumpfile, tools.kexec) if p)
    return [pass_("kdump-tooling", title, found, evidence)]


def check_config(state: KdumpState, estimate: Estimate) -> list[Line]:
    """The kdump configuration file parses and enables kdump."""
    title = "kdump configuration"
    config = active_config(state)
    why = "kdump-config and kdumpctl refuse to load the crash kernel when their configuration is wrong"
    if isinstance(config, NotAvailable):
        return [fail("kdump-config", title, config.reason, why, "install the kdump tooling (see above)", ())]
    lines = []
    for problem in config.problems:
        detail = f"{config.file.path} line {problem.line}: {problem.reason}"
        fix = f"correct or remove line {problem.line} of {config.file.path}"
        evidence = file_evidence(config.file, problem.line)
        lines.append(fail(f"kdump-config:{problem.reason}", title, detail, why, fix, evidence))
    use = config.get("USE_KDUMP") if _family(state) is DistroFamily.DEBIAN else None
    if use is not None and use.value != "1":
        detail = f"{config.file.path} line {use.line}: USE_KDUMP={use.value} disables kdump-tools"
        fix = "set USE_KDUMP=1: kforensic kdump setup --apply"
        lines.append(
            fail(
                "kdump-enabled",
                "kdump enabled in its configuration",
                detail,
                why,
                fix,
                file_evidence(config.file, use.line),
            )
        )
    if not lines:
        lines.append(
            pass_(
                "kdump-config",
                title,
                f"{config.file.path}: {len(config.entries)} settings, no errors",
                file_evidence(config.file, config.entries[0].line) if config.entries else (),
            )
        )
    return lines


def check_service(state: KdumpState, estimate: Estimate) -> list[Line]:
    """The kdump service starts at boot."""
    title = "kdump service enabled at boot"
    unit = _UNIT[_family(state)]
    loaded = isinstance(state.crash_loaded, TextFile) and state.crash_loaded.first_line() == "1"
    links = [link for link in state.services.enabled_links if link.endswith("/" + unit)]
    why = "the service loads the crash kernel at each boot; without it the first crash after a reboot is lost"
    fix = f"systemctl enable {unit}: kforensic kdump setup --apply"
    if links:
        return [pass_("kdump-service", title, f"{unit} enabled ({links[0]})", ())]
    if state.services.sysv_links:
        return [pass_("kdump-service", title, f"SysV start link {state.services.sysv_links[0]}", ())]
    if not state.services.systemd:
        detail = "no systemd and no SysV start link found: cannot tell whether kdump starts at boot"
        return [
            warn(
                "kdump-service",
                title,
                detail,
                why,
                "make your init system run kdump-config load / kdumpctl start at boot",
                (),
            )
        ]
    detail = f"no {unit} link in /etc/systemd/system/*.wants/"
    if loaded:
        return [warn("kdump-service", title, detail + " (loaded now, but not after the next reboot)", why, fix, ())]
    return [fail("kdump-service", title, detail, why, fix, ())]


def expected_dump_bytes(meminfo: MemInfo, level: int | None) -> int:
    """Upper bound of the dump size: RAM minus the page classes the dump level excludes."""
    excluded = 0
    if level:
        excluded += meminfo.cached if level & 2 else 0
        excluded += meminfo.buffers if level & 4 else 0
        excluded += meminfo.anon if level & 8 else 0
        excluded += meminfo.free if level & 16 else 0
    return max(meminfo.total - excluded, 0)


def check_space(state: KdumpState, estimate: Estimate) -> list[Line]:
    """The dump target has room for the expected dump."""
    title = "Room for the dump"
    target = state.dump_target
    evidence = file_evidence(target.config, target.entry.line) if target.entry and target.config else ()
    options, _, _ = collector_options(state)
    space = state.dump_space
    why = "makedumpfile stops when the disk fills: the dump is truncated or missing"
    if isinstance(space, NotAvailable):
        fix = "check the target's free space by hand" if target.kind is not TargetKind.LOCAL else "check the path"
        return [warn("dump-space", title, space.reason, why, fix, evidence)]
    if isinstance(state.meminfo, NotAvailable):
        detail = (
            f"{space.free_bytes // MIB} MiB free at {space.measured_at}; dump size unknown ({state.meminfo.reason})"
        )
        return [warn("dump-space", title, detail, why, "compare the free space with the RAM size", evidence)]
    expected = expected_dump_bytes(state.meminfo, options.dump_level)
    level = "no -d" if options.dump_level is None else f"-d {options.dump_level}"
    detail = (
        f"{space.free_bytes // MIB} MiB free at {space.measured_at} for {space.path};"
        f" expected dump up to {expected // MIB} MiB ({level}, before compression)"
    )
    if not evidence:
        evidence = file_evidence(state.meminfo.file, 1)
    if space.free_bytes < expected:
        fix = f"free space on {space.measured_at}, or point the dump to a larger file system (KDUMP_COREDIR / path)"
        return [fail("dump-space", title, detail, why, fix, evidence)]
    return [pass_("dump-space", title, detail, evidence)]


def check_collector(state: KdumpState, estimate: Estimate) -> list[Line]:
    """makedumpfile's dump level, compression and format produce a dump the analysis tools can read."""
    title = "makedumpfile options"
    options, file, number = collector_options(state)
    evidence = file_evidence(file, number) if file else ()
    source = f"{file.path} line {number}" if file else "the tooling's default"
    why = "the dump must be complete enough and in a format crash/drgn can open"
    fix = "kforensic kdump setup --apply sets makedumpfile -d 31 with zlib or lzo"
    if options.problems:
        return [fail("makedumpfile", title, f"{source}: {'; '.join(options.problems)}", why, fix, evidence)]
    if options.dmesg_only:
        return [
            fail("makedumpfile", title, f"{source}: --dump-dmesg saves only the log, no vmcore", why, fix, evidence)
        ]
    if options.program != "makedumpfile":
        detail = f"{source}: core collector {options.program} copies all memory unfiltered and uncompressed"
        return [warn("makedumpfile", title, detail, why, fix, evidence)]
    support = compression_support(options.compression)
    level = options.dump_level or 0
    detail = f"{source}: dump level {level}, compression {options.compression.value}{', ELF' if options.elf else ''}"
    if not level & 16 or not level & 1:
        left = ", ".join(excluded_classes(level)) or "nothing"
        detail += f" (leaves out {left}: the dump is as large as RAM)"
        return [
            warn(
                "makedumpfile", title, detail, "free and zero pages make the dump huge and slow to write", fix, evidence
            )
        ]
    if options.flattened and state.dump_target.kind is TargetKind.LOCAL:
        detail += ", flattened (-F)"
        return [
            warn(
                "makedumpfile",
                title,
                detail,
                "crash and drgn cannot open a flattened dump",
                "drop -F, or run makedumpfile -R on each dump",
                evidence,
            )
        ]
    if support.concern:
        return [
            warn(
                "makedumpfile",
                title,
                f"{detail}; readable by {support.readers}",
                support.concern,
                "use -l (lzo) or -c (zlib) unless every analysis host is recent",
                evidence,
            )
        ]
    if options.compression is Compression.NONE and not options.elf:
        detail += " (uncompressed kdump format)"
    return [pass_("makedumpfile", title, f"{detail}; readable by {support.readers}", evidence)]


def check_debuginfo(state: KdumpState, estimate: Estimate) -> list[Line]:
    """Debug info of the running kernel is at hand, or can be fetched."""
    title = "Kernel debug info"
    info = state.debuginfo
    build = info.build_id if isinstance(info.build_id, str) else "unknown"
    evidence = file_evidence(state.osrelease, 1)
    if info.vmlinux:
        return [pass_("debuginfo", title, f"{info.vmlinux[0]} (build id {build})", evidence)]
    if info.debuginfod_urls:
        via = f" ({info.debuginfod_file.path})" if info.debuginfod_file else " (DEBUGINFOD_URLS)"
        url_evidence = file_evidence(info.debuginfod_file, 1) if info.debuginfod_file else evidence
        return [pass_("debuginfo", title, f"debuginfod {info.debuginfod_urls[0]}{via}; build id {build}", url_evidence)]
    release = info.release if isinstance(info.release, str) else "<release>"
    package = _DEBUG_PACKAGE.get(
        state.distro.id, _DEBUG_PACKAGE.get(_family(state).value, "the kernel's debug symbols")
    )
    detail = f"no vmlinux with debug info for {release} (build id {build}) and no debuginfod server"
    why = "crash and drgn need the exact kernel's debug info to read a vmcore; old packages leave the archive"
    return [
        warn(
            "debuginfo",
            title,
            detail,
            why,
            f"install {package.format(release=release)}, or configure debuginfod",
            evidence,
        )
    ]


def check_read_problems(state: KdumpState, estimate: Estimate) -> list[Line]:
    """Files that exist but could not be read make the other lines less certain."""
    return [
        warn(
            f"unreadable:{p.path}",
            f"Could not read {p.path}",
            p.reason,
            "the checks that need it are incomplete",
            "run as root, or fix the file",
            (),
        )
        for p in state.problems
    ]


_WHY_RESERVE = "the crash kernel can only boot into memory reserved at boot with crashkernel="
_WHY_PERSIST = "a crashkernel= set only by hand is lost at the next kernel update or boot loader rewrite"
_FIX_CRASHKERNEL = "kforensic kdump setup --apply (adds crashkernel= to the boot configuration), then reboot"
_FIX_LOAD = {
    DistroFamily.DEBIAN: "kdump-config load (and check kdump-config show)",
    DistroFamily.RHEL: "systemctl restart kdump (and check kdumpctl status)",
    DistroFamily.UNKNOWN: "load it with kexec -p <kernel> --initrd=<initrd> --append=...",
}
_UNIT = {
    DistroFamily.DEBIAN: "kdump-tools.service",
    DistroFamily.RHEL: "kdump.service",
    DistroFamily.UNKNOWN: "kdump.service",
}
_DEBUG_PACKAGE = {
    "debian": "linux-image-{release}-dbg",
    "ubuntu": "linux-image-unsigned-{release}-dbgsym (from ddebs.ubuntu.com)",
    "rhel": "kernel-debuginfo-{release} (dnf debuginfo-install kernel-{release})",
    "fedora": "kernel-debuginfo-{release} (dnf debuginfo-install kernel-{release})",
}

#: The rules, in the order their lines are shown.
RULES: tuple[Callable[[KdumpState, Estimate], list[Line]], ...] = (
    check_distro,
    check_cmdline,
    check_boot_config,
    check_reservation,
    check_loaded,
    check_tooling,
    check_config,
    check_service,
    check_space,
    check_collector,
    check_sysctls,
    check_debuginfo,
    check_read_problems,
)


def run_checklist(state: KdumpState) -> Checklist:
    """Run every rule over the state."""
    estimate = crashkernel_estimate(state)
    lines = [line for rule in RULES for line in rule(state, estimate)]
    return Checklist(tuple(lines), estimate)
