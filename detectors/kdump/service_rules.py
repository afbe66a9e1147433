"""Checklist rules of the user-space side: tooling, configuration, service, dump target, collector, debug info."""

from __future__ import annotations

from detectors.kdump.context import active_config, collector_options, config_problem, tooling_family
from detectors.kdump.crashkernel import MIB
from detectors.kdump.kernel_rules import FIX_UNEXAMINED as _FIX_UNEXAMINED
from detectors.kdump.makedumpfile import Compression, compression_support, excluded_classes
from detectors.kdump.util import fail, file_evidence, pass_, unknown, warn
from forensics.model import NotAvailable, Severity
from forensics.types import kdump_paths as paths
from forensics.types.kdump import (
    CheckLine,
    DiskSpace,
    DistroFamily,
    DumpTarget,
    Estimate,
    KdumpConfig,
    KdumpState,
    MaybeFile,
    MemInfo,
    ReadProblem,
    TargetKind,
    TextFile,
)

COMPRESSION_FLOOR = 2  # assume compression at least halves the dump when judging free space

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


def check_tooling(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """The distribution's kdump tooling and makedumpfile are installed."""
    title = "kdump tooling installed"
    tools = state.tooling
    family = tooling_family(state)
    evidence = file_evidence(state.os_release, state.distro.evidence_line)
    why = "the tooling loads the crash kernel at boot and saves the dump after a crash"
    needed = {
        DistroFamily.DEBIAN: ("kdump-config", tools.kdump_config, "apt-get install kdump-tools"),
        DistroFamily.RHEL: ("kdumpctl", tools.kdumpctl, "dnf install kexec-tools (kdump-utils on Fedora 40+)"),
        DistroFamily.UNKNOWN: ("kdump-config or kdumpctl", tools.kdump_config or tools.kdumpctl, "install kexec-tools"),
    }[family]
    missing = [name for name, path in ((needed[0], needed[1]), ("makedumpfile", tools.makedumpfile)) if not path]
    if missing and tools.unsearched:
        # Not found in the directories looked into, and one could not be: the programs may well be there.
        dirs = "; ".join(
            f"cannot look in {p.path}: {p.reason}" + (f" ({p.errno_name})" if p.errno_name else "")
            for p in tools.unsearched
        )
        reason = f"{', '.join(missing)} not found in the directories read; {dirs}"
        fix = _unsearched_fix(tools.unsearched)
        return [unknown("kdump-tooling", title, reason, why, fix, evidence, severity=Severity.MEDIUM)]
    unexamined = state.programs_not_examined()
    if missing and unexamined:
        # Not looked for, so not known to be missing: the tree holds no /usr to find them in.
        reason = f"{', '.join(missing)}: {unexamined}"
        return [unknown("kdump-tooling", title, reason, why, _FIX_UNEXAMINED, evidence, severity=Severity.MEDIUM)]
    if missing:
        return [fail("kdump-tooling", title, f"missing: {', '.join(missing)}", why, needed[2], evidence)]
    found = ", ".join(p for p in (needed[1], tools.makedumpfile, tools.kexec) if p)
    return [pass_("kdump-tooling", title, found, evidence)]


def _unsearched_fix(unsearched: tuple[ReadProblem, ...]) -> str:
    """What lets the programs be looked for: this reader's rights (EACCES, EPERM: root may look), or the
    directory itself (a link loop, EIO: no user can look, root neither, so "run as root" would not help)."""
    denied = ", ".join(p.path for p in unsearched if p.denied)
    broken = ", ".join(p.path for p in unsearched if not p.denied)
    fixes = [f"run the check as root, or let this user search {denied}"] if denied else []
    if broken:
        fixes.append(f"make {broken} a directory that can be searched again (no user can look in it), then check again")
    return "; ".join(fixes)


def check_config(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """The kdump configuration file parses and enables kdump."""
    title = "kdump configuration"
    config = active_config(state)
    why = "kdump-config and kdumpctl refuse to load the crash kernel when their configuration is wrong"
    if isinstance(config, NotAvailable):
        return [_unread_config(state, title, config, why)]
    lines = []
    for problem in config.problems:
        detail = f"{config.file.path} line {problem.line}: {problem.reason}"
        fix = f"correct or remove line {problem.line} of {config.file.path}"
        evidence = file_evidence(config.file, problem.line)
        lines.append(fail(f"kdump-config:{problem.reason}", title, detail, why, fix, evidence))
    debian = tooling_family(state) is DistroFamily.DEBIAN
    use = config.get("USE_KDUMP") if debian else None
    if debian and use is None:
        detail = f"{config.file.path} does not set USE_KDUMP: kdump-tools stays disabled"
        lines.append(fail("kdump-enabled", "kdump enabled in its configuration", detail, why, "set USE_KDUMP=1", ()))
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


def _unread_config(state: KdumpState, title: str, config: NotAvailable, why: str) -> CheckLine:
    """The configuration's line when it was not read: absent (the package brings it) or unreadable (why, the errno)."""
    problem = config_problem(state)
    if problem is None and state.partial():
        # Absent from a partial copy: not copied, or not there; only on a whole system is its absence a fault.
        return unknown("kdump-config", title, config.reason, why, _FIX_UNEXAMINED, (), severity=Severity.MEDIUM)
    if problem is None:
        return fail("kdump-config", title, config.reason, why, "install the kdump tooling (see above)", ())
    cause = f"cannot read {problem.path}: {problem.reason}" + (f" ({problem.errno_name})" if problem.errno_name else "")
    unread = "whether it enables kdump, where the dump goes and how makedumpfile runs are not known"
    if problem.denied:
        # This reader's rights, not the system's fault: the tooling reads it as root.
        fix = f"run the check as root, or let this user read {problem.path}"
        return unknown("kdump-config", title, f"{cause}: {unread}", why, fix, (), severity=Severity.MEDIUM)
    if problem.lasting:
        # What the path is (a directory, a link loop): every reader meets it, the tooling at boot too.
        fix = f"make {problem.path} a readable configuration file again, then check again"
        return fail("kdump-config", title, f"{cause}: the kdump tooling cannot read it either", why, fix, ())
    # The read failed (EIO: the disk or the file system): nothing of the configuration was read, and whether the
    # tooling's read at boot fails too is not known.  It was a FAIL, "the kdump tooling cannot read it either".
    failed = f"the read failed: {problem.reason}" + (f" ({problem.errno_name})" if problem.errno_name else "")
    fix = (
        f"find why reading {problem.path} fails (I/O errors of its disk: dmesg; cat {problem.path}), repair or"
        " restore it, then check again"
    )
    return unknown("kdump-config", title, f"{failed}, {problem.path}: {unread}", why, fix, (), severity=Severity.MEDIUM)


def check_service(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """The kdump service starts at boot."""
    title = "kdump service enabled at boot"
    unit = _UNIT[tooling_family(state)]
    loaded = isinstance(state.crash_loaded, TextFile) and state.crash_loaded.first_line() == "1"
    links = [link for link in state.services.enabled_links if link.endswith("/" + unit)]
    why = "the service loads the crash kernel at each boot; without it the first crash after a reboot is lost"
    fix = f"systemctl enable {unit}: kforensic kdump setup --apply"
    if links:
        return [pass_("kdump-service", title, f"{unit} enabled ({links[0]})", ())]
    native = next((f for f in state.services.unit_files if f.endswith("/" + unit)), None)
    if state.services.sysv_links and not (state.services.systemd and native):
        return [_sysv_started(state, title)]
    unread = [p for p in state.problems if p.path.startswith(paths.SYSTEMD_UNIT_DIR)]
    if state.services.systemd and unread:
        # No link seen in a directory not read is not "no link": the unit may well be enabled.
        reason = f"cannot read {unread[0].path}: {unread[0].reason}"
        return [
            unknown(
                "kdump-service", title, reason, why, "run as root, or fix the directory", (), severity=Severity.MEDIUM
            )
        ]
    unexamined = state.not_examined(paths.SYSTEMD_UNIT_DIR) or state.partial()
    if unexamined:
        # No link seen in a partial copy is not "not enabled": the links may not have been copied.
        reason = f"the service's start links: {unexamined}"
        return [unknown("kdump-service", title, reason, why, _FIX_UNEXAMINED, (), severity=Severity.MEDIUM)]
    if not state.services.systemd:
        return [_init_unknown(state, title, why, loaded)]
    detail = f"no {unit} link in /etc/systemd/system/*.wants/"
    if state.services.sysv_links:
        # systemd-sysv-generator skips a SysV script that has a native unit: its start link starts nothing.  It was
        # a PASS ("SysV start link ...") of a service systemd never starts.
        detail += f" (the SysV start link {state.services.sysv_links[0]} is ignored: systemd runs {native} instead)"
    if loaded:
        return [warn("kdump-service", title, detail + " (loaded now, but not after the next reboot)", why, fix, ())]
    return [fail("kdump-service", title, detail, why, fix, ())]


def _sysv_started(state: KdumpState, title: str) -> CheckLine:
    """A start link of a kdump init script: sysv-rc runs it at boot.  On Debian the script loads the crash kernel only
    with USE_KDUMP=1, cited when set (the configuration's own line fails otherwise)."""
    detail = f"SysV start link {state.services.sysv_links[0]}"
    config = active_config(state)
    if tooling_family(state) is not DistroFamily.DEBIAN or isinstance(config, NotAvailable):
        return pass_("kdump-service", title, detail, ())
    use = config.get("USE_KDUMP")
    if use is None or use.value != "1":
        return pass_("kdump-service", title, detail, ())
    detail += f"; the script loads the crash kernel: USE_KDUMP=1 ({config.file.path} line {use.line})"
    return pass_("kdump-service", title, detail, file_evidence(config.file, use.line))


def _init_unknown(state: KdumpState, title: str, why: str, loaded: bool) -> CheckLine:
    """No systemd and no start link of a kdump init script: whether this init system (sysvinit without the links,
    OpenRC, runit) starts kdump at boot was not read.  It was a medium WARN "cannot tell", a problem of a fault not
    seen."""
    now = "; the crash kernel is loaded now" if loaded else ""
    levels = "".join(paths.SYSV_RUNLEVELS)
    family = tooling_family(state)
    scripts = state.services.init_scripts
    if scripts:
        name = scripts[0].rsplit("/", 1)[-1]
        reason = (
            f"no systemd; {scripts[0]} is installed, with no /etc/rc[{levels}].d/S*kdump* start link: whether this"
            f" init system runs it at boot is not known{now}"
        )
        enable = {
            DistroFamily.DEBIAN: f"update-rc.d {name} defaults",
            DistroFamily.RHEL: f"chkconfig {name} on",
            DistroFamily.UNKNOWN: f"update-rc.d {name} defaults or chkconfig {name} on",
        }[family]
        fix = f"on sysvinit: {enable} (makes its start links); on another init system, add {name} to its boot services"
    else:
        reason = (
            f"no systemd, no kdump init script ({' nor '.join(paths.INIT_SCRIPTS)}) and no start link: how this init"
            f" system starts kdump was not read{now}"
        )
        load = {
            DistroFamily.DEBIAN: "kdump-config load",
            DistroFamily.RHEL: "kdumpctl start",
            DistroFamily.UNKNOWN: "kdump-config load or kdumpctl start",
        }[family]
        fix = f"make your init system run {load} at every boot (a crash kernel loaded by hand is gone after a reboot)"
    return unknown("kdump-service", title, reason, why, fix, (), severity=Severity.MEDIUM, by_hand=True)


def expected_dump_bytes(meminfo: MemInfo, level: int | None) -> int:
    """Upper bound of the dump size: RAM minus the page classes the dump level excludes."""
    excluded = 0
    if level:
        excluded += meminfo.cached if level & 2 else 0
        excluded += meminfo.buffers if level & 4 else 0
        excluded += meminfo.anon if level & 8 else 0
        excluded += meminfo.free if level & 16 else 0
    return max(meminfo.total - excluded, 0)


def _unread_config_fix(state: KdumpState, config: NotAvailable) -> str:
    """What brings the unread configuration: the package when it is absent, access when it is not readable, the
    installed system's tree when this one has no /etc."""
    if state.partial() and not config.reason.startswith("cannot read"):
        return _FIX_UNEXAMINED
    if config.reason.startswith("cannot read"):
        return "make the kdump configuration readable (see above), then check again"
    return "install the kdump tooling (see above), then check again"


def check_space(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """The dump target has room for the expected dump."""
    title = "Room for the dump"
    target = state.dump_target
    evidence = file_evidence(target.config, target.entry.line) if target.entry and target.config else ()
    options, _, _ = collector_options(state)
    space = state.dump_space
    why = "makedumpfile stops when the disk fills: the dump is truncated or missing"
    config = active_config(state)
    if isinstance(config, NotAvailable):
        # The target (local directory, device, NFS, SSH) is set in the configuration: free space of the
        # default directory says nothing about where an unread configuration sends the dump.
        measured = (
            f"; {space.free_bytes // MIB} MiB free at {space.measured_at}" if isinstance(space, DiskSpace) else ""
        )
        reason = f"the dump target is set in a configuration not read: {config.reason}{measured}"
        return [
            unknown(
                "dump-space",
                title,
                reason,
                why,
                _unread_config_fix(state, config),
                evidence,
                severity=Severity.MEDIUM,
            )
        ]
    if target.kind is not TargetKind.LOCAL:
        # Another machine's disk (NFS, SSH) or one the crash kernel mounts: not measurable from here, so not a fault
        # seen (it was a medium WARN, "check the target's free space by hand").
        where, fix = _target_measure(target, config)
        reason = f"not measured: the dump goes to {where}, whose free space cannot be measured from here"
        return [unknown("dump-space", title, reason, why, fix, evidence, severity=Severity.MEDIUM, by_hand=True)]
    if isinstance(space, NotAvailable):
        # A local directory that could not be measured (a /var this reader may not search; a --root copy, on another
        # disk than the machine's): unknown, not a fault.
        fix = "check the path"
        if state.root != "/":
            fix = (
                f"on the machine itself: df -h {target.location} (its nearest existing parent); if {state.root} is"
                f" that machine's disk mounted here: df -h {state.root.rstrip('/')}/{target.location.lstrip('/')};"
                f" or check a copy that holds df's output ({paths.SOS_DF[0]}, as sos report makes it)"
            )
        return [unknown("dump-space", title, space.reason, why, fix, evidence, severity=Severity.MEDIUM)]
    if isinstance(state.meminfo, NotAvailable):
        # The room is read, the dump's size is not: nothing to judge the room against.
        reason = f"the dump size: {state.meminfo.reason}; {space.free_bytes // MIB} MiB free at {space.measured_at}"
        fix = "compare the free space with the RAM size"
        return [unknown("dump-space", title, reason, why, fix, evidence, severity=Severity.MEDIUM)]
    expected = expected_dump_bytes(state.meminfo, options.dump_level)
    level = "no -d" if options.dump_level is None else f"-d {options.dump_level}"
    recorded = f" (the copy's df: {space.df.path} line {space.df_line}, when it was made)" if space.df else ""
    detail = (
        f"{space.free_bytes // MIB} MiB free at {space.measured_at} for {space.path}{recorded};"
        f" expected dump up to {expected // MIB} MiB ({level}, before compression)"
    )
    evidence = file_evidence(space.df, space.df_line) + evidence
    if not evidence:
        evidence = file_evidence(state.meminfo.file, 1)
    fix = f"free space on {space.measured_at}, or point the dump to a larger file system (KDUMP_COREDIR / path)"
    # Compression (or ELF with filtering) rarely saves less than half of kernel memory: below half the
    # uncompressed bound the dump cannot fit; between half and the bound it may not.
    compressed = options.compression is not Compression.NONE
    if space.free_bytes < (expected // COMPRESSION_FLOOR if compressed else expected):
        return [fail("dump-space", title, detail, why, fix, evidence)]
    if space.free_bytes < expected:
        detail += f"; fits only if {options.compression.value} compresses it {expected / space.free_bytes:.1f}x"
        return [warn("dump-space", title, detail, why, fix, evidence)]
    return [pass_("dump-space", title, detail, evidence)]


def _target_measure(target: DumpTarget, config: KdumpConfig) -> tuple[str, str]:
    """What a target that is not a local directory is, and the command that measures its room where it is."""
    key = target.entry.key.lower() if target.entry else ""
    value = target.entry.value if target.entry else target.location
    line = f" ({target.config.path} line {target.entry.line})" if target.entry and target.config else ""
    # The directory the tooling writes under: kdump-tools' KDUMP_COREDIR (on the SSH host; an NFS export is mounted
    # there), kdump.conf's path (relative to the NFS export, or on the SSH host).
    entry = config.get("path") or config.get("KDUMP_COREDIR")
    directory = entry.value if entry is not None and entry.value else paths.DEFAULT_DUMP_DIR
    if key == "ssh":
        return f"the SSH host {value}{line}", f"ssh {value} df -h {directory} (its nearest existing parent)"
    if key == "nfs":
        server, _, export = value.partition(":")
        return f"the NFS export {value}{line}", f"on {server}: df -h {export or '/'} (the exported directory)"
    if key == "raw":
        return f"the raw device {value}{line}", f"blockdev --getsize64 {value}: the dump is written to it whole"
    return (
        f"the {key} file system {value}{line}, mounted by the crash kernel",
        f"df -h on {value} where it is mounted (findmnt --source {value}), or mount it and measure",
    )


def check_collector(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """makedumpfile's dump level, compression and format produce a dump the analysis tools can read."""
    title = "makedumpfile options"
    options, file, number = collector_options(state)
    evidence = file_evidence(file, number) if file else ()
    source = f"{file.path} line {number}" if file else "the tooling's default"
    why = "the dump must be complete enough and in a format crash/drgn can open"
    fix = "kforensic kdump setup --apply sets makedumpfile -d 31 with zlib or lzo"
    config = active_config(state)
    if isinstance(config, NotAvailable):
        # The tooling's default applies only to a configuration that sets no collector; one not read may set any.
        reason = f"the core collector is set in a configuration not read: {config.reason}"
        return [
            unknown(
                "makedumpfile",
                title,
                reason,
                why,
                _unread_config_fix(state, config),
                (),
                severity=Severity.MEDIUM,
            )
        ]
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


def check_debuginfo(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
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
    if isinstance(info.release, NotAvailable):
        # Which kernel's debug info to look for is not known (an installed system mounted with an empty /proc): no
        # vmlinux found for no release is no fault seen (it was a medium WARN "no vmlinux ... for <release>").
        reason = f"which kernel runs: {info.release.reason}"
        why = "crash and drgn need the exact kernel's debug info to read a vmcore"
        fix = "run the check on the running system, or with its /proc (kernel release) and /sys (build id)"
        return [unknown("debuginfo", title, reason, why, fix, evidence, severity=Severity.LOW)]
    release = info.release
    package = _DEBUG_PACKAGE.get(state.distro.id, _DEBUG_PACKAGE.get(tooling_family(state).value))
    detail = f"no vmlinux with debug info for {release} (build id {build}) and no debuginfod server"
    why = "crash and drgn need the exact kernel's debug info to read a vmcore"
    origin = info.origin
    if origin is not None and origin.package and package:
        # The package database names the running kernel's package: its distribution's debug package exists.
        detail += f"; the kernel is from the package {origin.package} ({origin.database})"
        evidence = file_evidence(origin.entry, origin.line) + evidence
        fix = f"install {package.format(release=release)}, or configure debuginfod"
        # Low: a distribution kernel's debug info can be installed or fetched when a vmcore is to be read (a ready
        # Ubuntu or RHEL machine without it was "1 problem(s)", medium); only a local build's may be lost.
        why = f"{why}; old packages leave the archive"
        return [warn("debuginfo", title, detail, why, fix, evidence, severity=Severity.LOW)]
    built = _builder(origin.version if origin else None)
    if origin is not None and origin.package is None and isinstance(origin.database, str):
        # Read, and no package installs this kernel: built elsewhere, no distribution debug package has it.
        detail += f"; no package in {origin.database} installs it{built}"
        evidence = file_evidence(origin.version, 1) if isinstance(origin.version, TextFile) else evidence
        return [warn("debuginfo", title, detail, why, f"{_own_build(build)}; no distribution package has it", evidence)]
    # Not known whether a package installed it: both ways are named, each with its condition.
    cause = origin.database.reason if origin is not None and isinstance(origin.database, NotAvailable) else "unknown"
    detail += f"; whether a package installed it is unknown ({cause}){built}"
    debug_package = package.format(release=release) if package else "its distribution's kernel debug package"
    # Each branch says its own: "no distribution package has it" holds for a local build only.
    local = f"if it was built locally (no distribution package has its debug info): {_own_build(build)}"
    fix = f"if a package installed it: install {debug_package}; {local}"
    # Low: a local build (medium, above) is not known; a distribution's kernel (the usual case) can be fetched later.
    return [warn("debuginfo", title, detail, why, fix, evidence, severity=Severity.LOW)]


def _own_build(build: str) -> str:
    """Where the debug info of a kernel no distribution package installed is: its own build's."""
    return (
        "use the vmlinux of the build tree it was built in (with CONFIG_DEBUG_INFO=y; from that very build, build id"
        f" {build}), or a debuginfod server that indexes that build"
    )


def _builder(version: MaybeFile | None) -> str:
    """Who built the running kernel, as /proc/version says ("" when not read)."""
    if not isinstance(version, TextFile):
        return ""
    words = version.first_line().split()
    # "Linux version <release> (<user>@<host>) (<compiler>...) #1 SMP ...": the builder is the fourth word.
    by = words[3] if len(words) > 3 and words[3].startswith("(") and "@" in words[3] else ""
    return f" ({version.path}: built by {by.strip('()')})" if by else ""


def check_read_problems(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """Files that exist but could not be read make the other lines less certain: each is unknown, never a fault of
    its own (it was a medium WARN, a problem of every unreadable file); the check that needs it says its own verdict
    (unknown, or the fault the tooling meets too) at its own severity, so this line is low, holding no verdict back."""
    return [
        unknown(
            f"unreadable:{p.path}",
            f"Could not read {p.path}",
            p.reason + (f" ({p.errno_name})" if p.errno_name else ""),
            "the checks that need it are incomplete",
            # Root reads what this reader may not; what no reader can read (a directory, a link loop, EIO) root
            # cannot either, and the line of the check that needs it says how to repair it.
            "run the check as root, or let this user read it"
            if p.denied
            else "repair it: no reader can read it, root neither",
            (),
            severity=Severity.LOW,
        )
        for p in state.problems
    ]
