"""Collecting :class:`KdumpState` from a root tree: the running system (``/``) or a copy of one.

Nothing here runs a program: the service state is read from systemd's unit
links, the free space with ``statvfs`` (injectable for tests), the kernel's
crash reservation from sysfs.  Files that exist but cannot be read become
:class:`ReadProblem` records and NotAvailable values, never exceptions.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

from collectors.kdump.config import KDUMP_CONF_FS_TYPES, parse_kdump_conf, parse_kdump_tools
from collectors.kdump.reader import RootReader, StatvfsProvider, missing, real_statvfs
from collectors.kdump.sysctl_files import boot_sysctls
from forensics.errors import InputError
from forensics.model import NotAvailable
from forensics.types import kdump_paths as paths
from forensics.types.kdump import (
    BootConfig,
    BootEntry,
    BootImages,
    CrashkernelLog,
    DebugInfo,
    DiskSpace,
    Distro,
    DistroFamily,
    DumpTarget,
    KdumpConfig,
    KdumpState,
    KernelConfig,
    KernelPackage,
    MaybeFile,
    MemInfo,
    ServiceState,
    SshKey,
    Sysctl,
    TargetKind,
    TextFile,
    Tooling,
)

_DEBIAN_IDS = ("debian", "ubuntu")
_RHEL_IDS = ("rhel", "centos", "fedora", "rocky", "almalinux", "ol")
_CRASHKERNEL = re.compile(r"(?:^|[\s\"'])crashkernel=([^\s\"']+)")
_NT_GNU_BUILD_ID = 3


def collect_kdump_state(root: Path, statvfs: StatvfsProvider = real_statvfs) -> KdumpState:
    """Read the crash-dump setup of the system under ``root`` (``/`` for this machine).

    Raises :class:`InputError` only when ``root`` itself is not a directory.
    """
    if not root.is_dir():
        raise InputError(f"--root {root}: not a directory", hint="give the root of a system tree, e.g. /mnt/sysimage")
    reader = RootReader(root)
    if reader.root != Path("/") and all(reader.look_up(d) is False for d in paths.CHECKED_DIRS):
        names = ", ".join(d.lstrip("/") for d in paths.CHECKED_DIRS)
        raise InputError(
            f"--root {root}: not a system root: it has none of {names} (nothing a kdump check reads)",
            hint="give the root of an installed system (e.g. /mnt/sysimage) or a copy of its /proc and /sys; "
            "without --root the check reads this machine",
        )
    # A tree without /usr or /etc (the /proc and /sys a fixture recorded) says nothing of the programs or the
    # configuration: checked on such a tree they were "missing", and the verdict "the next crash will be lost".
    # A tree with /usr but without /usr/sbin or /usr/bin (a sos report copies no program) is a partial copy too: a
    # program not found there was "missing", a FAIL, of a system whose tooling was installed.
    unexamined = () if reader.root == Path("/") else tuple(d for d in paths.SYSTEM_DIRS if reader.look_up(d) is False)
    if reader.root != Path("/") and "/usr" not in unexamined:
        unexamined += tuple(d for d in paths.PROGRAM_DIRS if reader.look_up(d) is False)
    os_release = _first_existing(reader, paths.OS_RELEASE)
    distro = _distro(os_release)
    debian_config = _config(reader, paths.DEBIAN_CONFIG, debian=True)
    rhel_config = _config(reader, paths.RHEL_CONFIG, debian=False)
    osrelease = reader.read_text(paths.OSRELEASE)
    release = osrelease.first_line() if isinstance(osrelease, TextFile) else osrelease
    arch_file = reader.read_text(paths.ARCH)
    meminfo = _meminfo(reader.read_text(paths.MEMINFO))
    target = _dump_target(distro, debian_config, rhel_config)
    crash_size = _running_kernel_file(reader, paths.KEXEC_CRASH_SIZE)
    system_ram, ram_source = _system_ram(reader.read_text(paths.IOMEM), meminfo)
    return KdumpState(
        root=str(root),
        distro=distro,
        os_release=os_release,
        hostname=reader.read_text(paths.HOSTNAME),
        cmdline=_running_kernel_file(reader, paths.CMDLINE),
        crash_size=crash_size,
        crash_loaded=_running_kernel_file(reader, paths.KEXEC_CRASH_LOADED),
        osrelease=osrelease,
        arch=arch_file.first_line() if isinstance(arch_file, TextFile) else arch_file,
        meminfo=meminfo,
        system_ram_bytes=system_ram,
        system_ram_source=ram_source,
        ssh_key=_ssh_key(reader, target, debian_config, rhel_config),
        tooling=_tooling(reader),
        debian_config=debian_config,
        rhel_config=rhel_config,
        services=_services(reader, live=reader.root == Path("/")),
        dump_target=target,
        sysctls=tuple(Sysctl(name, reader.read_text(path)) for name, path in paths.PANIC_SYSCTLS),
        boot_sysctls=boot_sysctls(reader),
        dump_space=_dump_space(reader, target, statvfs, unexamined),
        images=_images(reader, distro.family, release),
        boot=_boot_config(reader),
        debuginfo=_debuginfo(reader, release, distro.family),
        kernel_config=_kernel_config(reader, release),
        managed_files=tuple((path, reader.read_text(path)) for path in paths.MANAGED_FILES),
        problems=tuple(reader.problems),
        sources=tuple(reader.sources),
        unexamined=unexamined,
        crash_log=_crash_log(reader, release)
        if isinstance(crash_size, TextFile) and crash_size.first_line() == "0"
        else None,
    )


#: Kernel logs are larger than configuration files: the last boot of a long kern.log may lie past the first 4 MiB.
_LOG_LIMIT = 32 << 20


def _crash_log(reader: RootReader, release: str | NotAvailable) -> CrashkernelLog | NotAvailable:
    """The kernel's crashkernel lines of the last boot the kernel log holds: the live ring buffer on this machine,
    else the first of paths.KERNEL_LOGS under the root that can be read.  Only the kernel's own records: /dev/kmsg's
    of facility 0 (user space writes there too), a syslog file's lines tagged "kernel:"."""
    why: list[str] = []
    if reader.root == Path("/"):
        from collectors.kernel_log import KmsgDumpReader
        from forensics.errors import CollectionError

        try:
            records = [r.decode("utf-8", "replace").partition(";") for r in KmsgDumpReader().chunks()]
        except CollectionError as exc:
            why.append(exc.message)
        else:
            # "PRI,SEQ,TS,FLAGS;message": facility = PRI >> 3, 0 for the kernel's own printk.
            kernel = [text.rstrip("\n") for head, _, text in records if _kernel_facility(head)]
            return _crash_lines(paths.KMSG, None, kernel, release, tagged=False)
    for path in paths.KERNEL_LOGS:
        file = reader.read_text(path, limit=_LOG_LIMIT)
        if isinstance(file, TextFile):
            return _crash_lines(path, file, file.lines, release, tagged=True)
        if "does not exist" not in file.reason:
            why.append(file.reason)
    return NotAvailable("; ".join(why) or f"no kernel log under the root ({', '.join(paths.KERNEL_LOGS)})")


#: A syslog line's prefix ("Dec  7 04:00:00 host kernel: ") and the printk time ("[    0.000000] "): the message is
#: what the detail quotes.
_LOG_PREFIX = re.compile(r"^(?:.*?\bkernel: )?(?:\[\s*\d+\.\d+\]\s*)?")
#: The tag of the kernel's lines in a syslog file; other programs (kdump-tools, systemd) log about crashkernel too.
_KERNEL_TAG = re.compile(r"\bkernel: ")
_LINUX_VERSION = re.compile(r"Linux version (\S+)")


def _digits(text: str) -> bool:
    """Whether ``text`` is a number int() reads: ASCII digits only (str.isdigit is true of "²", which int() refuses: a
    /proc/meminfo or df line holding one ended the check in an internal error, exit 4)."""
    return text.isascii() and text.isdigit()


def _kernel_facility(head: str) -> bool:
    prio = head.partition(",")[0]
    return _digits(prio) and int(prio) >> 3 == 0


def _crash_lines(
    source: str, file: TextFile | None, lines: tuple[str, ...] | list[str], release: str | NotAvailable, *, tagged: bool
) -> CrashkernelLog:
    kernel = [(n, line) for n, line in enumerate(lines) if not tagged or _KERNEL_TAG.search(line)]
    boots = [(n, m.group(1)) for n, line in kernel if (m := _LINUX_VERSION.search(line))]
    start, booted = boots[-1] if boots else (0, "")
    if booted and isinstance(release, str) and release and booted != release:
        # The log's last boot is another kernel's: what it says of crashkernel is not about this boot.
        return CrashkernelLog(source, file, (), booted, start + 1)
    # The command line's own crashkernel= is no news (it is read from /proc/cmdline).
    found = tuple(
        (n + 1, _LOG_PREFIX.sub("", line).strip())
        for n, line in kernel
        if n >= start and "crashkernel" in line.lower() and "command line" not in line.lower()
    )
    return CrashkernelLog(source, file, found[:5])


def _running_kernel_file(reader: RootReader, target: str) -> MaybeFile:
    """A file of the running kernel's /proc or /sys; in a root tree whose /proc or /sys is absent or empty (an
    installed system mounted at /mnt/sysimage), not read, rather than absent.

    An absent /sys/kernel/kexec_crash_size means a kernel without crash support; an offline tree's empty /sys
    says nothing about any kernel (it was "the kernel was built without kexec crash support", a FAIL).
    """
    read = reader.read_text(target)
    pseudo = "/" + target.strip("/").split("/", 1)[0]  # /proc or /sys
    if reader.root == Path("/") or not isinstance(read, NotAvailable) or "does not exist" not in read.reason:
        return read
    where = reader.host_path(pseudo)
    try:
        holds = where.is_dir() and any(where.iterdir())
    except OSError:
        return read
    if holds:
        return read
    return NotAvailable(
        f"{target} not read: {pseudo} under the root {reader.root} is {'empty' if where.is_dir() else 'absent'} "
        "(not a running system's, nor a copy of it)"
    )


_CONFIG_SET = re.compile(r"CONFIG_(\w+)=(.*)")
_CONFIG_UNSET = re.compile(r"# CONFIG_(\w+) is not set")


def _kernel_config(reader: RootReader, release: str | NotAvailable) -> KernelConfig | NotAvailable:
    """The running kernel's build configuration: its own /proc/config.gz, else the distribution's
    /boot/config-RELEASE; NotAvailable naming both when neither is read."""
    file = reader.read_gzip_text(paths.PROC_CONFIG_GZ)
    if isinstance(file, NotAvailable):
        if isinstance(release, NotAvailable) or not release:
            return NotAvailable(f"{file.reason}; the kernel release is unknown, so no /boot/config-RELEASE")
        boot = reader.read_text(paths.BOOT_CONFIG.format(release=release))
        if isinstance(boot, NotAvailable):
            return NotAvailable(f"{file.reason}; {boot.reason}")
        file = boot
    options: dict[str, tuple[int, str | None]] = {}
    for number, line in enumerate(file.lines, 1):
        if m := _CONFIG_SET.fullmatch(line.strip()):
            options[m.group(1)] = (number, m.group(2).strip('"'))
        elif m := _CONFIG_UNSET.fullmatch(line.strip()):
            options[m.group(1)] = (number, None)
    return KernelConfig(file, options)


def _first_existing(reader: RootReader, candidates: tuple[str, ...]) -> MaybeFile:
    result: MaybeFile = missing(candidates[0])
    for path in candidates:
        result = reader.read_text(path)
        if isinstance(result, TextFile):
            return result
    return result


def _distro(os_release: MaybeFile) -> Distro:
    if isinstance(os_release, NotAvailable):
        return Distro(DistroFamily.UNKNOWN, "", "", "unknown (no os-release)", 0)
    fields: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(os_release.lines, 1):
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            fields[key.strip()] = (value.strip().strip("\"'"), number)
    distro_id, id_line = fields.get("ID", ("", 0))
    like = fields.get("ID_LIKE", ("", 0))[0].split()
    family = DistroFamily.UNKNOWN
    if distro_id in _DEBIAN_IDS or "debian" in like or "ubuntu" in like:
        family = DistroFamily.DEBIAN
    elif distro_id in _RHEL_IDS or any(x in _RHEL_IDS for x in like):
        family = DistroFamily.RHEL
    name = fields.get("PRETTY_NAME", (distro_id or "unknown", 0))[0]
    return Distro(family, distro_id, fields.get("VERSION_ID", ("", 0))[0], name, id_line, tuple(like))


def _config(reader: RootReader, path: str, *, debian: bool) -> KdumpConfig | NotAvailable:
    file = reader.read_text(path)
    if isinstance(file, NotAvailable):
        return file
    return parse_kdump_tools(file) if debian else parse_kdump_conf(file)


def _meminfo(file: MaybeFile) -> MemInfo | NotAvailable:
    if isinstance(file, NotAvailable):
        return file
    values: dict[str, int] = {}
    for line in file.lines:
        key, _, rest = line.partition(":")
        words = rest.split()
        if words and _digits(words[0]):
            values[key.strip()] = int(words[0]) * (1024 if words[1:2] == ["kB"] else 1)
    if "MemTotal" not in values:
        return NotAvailable(f"{file.path} has no MemTotal line")
    return MemInfo(
        total=values["MemTotal"],
        free=values.get("MemFree", 0),
        buffers=values.get("Buffers", 0),
        cached=values.get("Cached", 0),
        anon=values.get("AnonPages", 0),
        file=file,
    )


def _system_ram(iomem: MaybeFile, meminfo: MemInfo | NotAvailable) -> tuple[int | NotAvailable, str]:
    """RAM as the kernel sizes crashkernel ranges: top-level "System RAM" of /proc/iomem, else MemTotal; and which."""
    total = 0
    if isinstance(iomem, TextFile):
        for line in iomem.lines:
            if line.startswith(" ") or "System RAM" not in line:
                continue
            span = line.split(":", 1)[0].strip()
            start, _, end = span.partition("-")
            try:
                total += int(end, 16) - int(start, 16) + 1
            except ValueError:
                continue
    # Unprivileged readers see all-zero addresses: fall back to MemTotal, a little smaller.
    if total > 1:
        return total, "/proc/iomem System RAM"
    if isinstance(meminfo, MemInfo):
        return meminfo.total, "MemTotal"
    return NotAvailable("neither /proc/iomem nor /proc/meminfo give the memory size"), ""


def _which(reader: RootReader, name: str) -> str | None:
    for directory in paths.BIN_DIRS:
        candidate = f"{directory}/{name}"
        if reader.look_up(candidate) is True:
            return candidate
    return None


def _tooling(reader: RootReader) -> Tooling:
    found = {name: _which(reader, name) for name in paths.TOOLS}
    unsearched = tuple(p for p in reader.problems if p.path in paths.BIN_DIRS)
    return Tooling(
        kdump_config=found["kdump-config"],
        kdumpctl=found["kdumpctl"],
        makedumpfile=found["makedumpfile"],
        kexec=found["kexec"],
        grubby=found["grubby"],
        update_grub=found["update-grub"],
        unsearched=unsearched,
        grub_mkconfig=found["grub2-mkconfig"] or found["grub-mkconfig"],
    )


def _services(reader: RootReader, *, live: bool) -> ServiceState:
    """Whether systemd starts the services, and which kdump units and init scripts it and sysv-rc start.

    A running system (``live``) runs systemd only where /run/systemd/system exists (sd_booted(3)): systemd's program
    installed beside another init (a container whose PID 1 is not systemd, sysvinit on Debian) starts nothing, and its
    unit links were judged as if it did ("no kdump-tools.service link", a FAIL).  A tree has no /run of its own: the
    program installed is what tells."""
    markers = (paths.SYSTEMD_RUNNING,) if live else paths.SYSTEMD_MARKERS
    systemd = any(reader.exists(marker) for marker in markers)
    units = (paths.DEBIAN_UNIT, paths.RHEL_UNIT)
    links: list[str] = []
    for wants in reader.listdir(paths.SYSTEMD_UNIT_DIR):
        if not wants.endswith(".wants"):
            continue
        directory = f"{paths.SYSTEMD_UNIT_DIR}/{wants}"
        links.extend(f"{directory}/{name}" for name in reader.listdir(directory) if name in units)
    sysv: list[str] = []
    for level in paths.SYSV_RUNLEVELS:
        directory = f"/etc/rc{level}.d"
        sysv.extend(f"{directory}/{n}" for n in reader.listdir(directory) if n.startswith("S") and "kdump" in n)
    scripts = tuple(path for path in paths.INIT_SCRIPTS if reader.exists(path))
    unit_files = tuple(f"{d}/{u}" for d in paths.SYSTEMD_UNIT_FILE_DIRS for u in units if reader.exists(f"{d}/{u}"))
    return ServiceState(
        systemd=systemd, enabled_links=tuple(links), sysv_links=tuple(sysv), init_scripts=scripts, unit_files=unit_files
    )


def _dump_target(distro: Distro, debian: KdumpConfig | NotAvailable, rhel: KdumpConfig | NotAvailable) -> DumpTarget:
    """The dump destination of the config the distribution's tooling reads."""
    use_debian = distro.family is DistroFamily.DEBIAN or (
        distro.family is DistroFamily.UNKNOWN and isinstance(debian, KdumpConfig)
    )
    if use_debian and isinstance(debian, KdumpConfig):
        for key in ("NFS", "SSH"):
            entry = debian.get(key)
            if entry is not None and entry.value:
                return DumpTarget(TargetKind.REMOTE, entry.value, entry, debian.file)
        entry = debian.get("KDUMP_COREDIR")
        if entry is not None and entry.value:
            return DumpTarget(TargetKind.LOCAL, entry.value, entry, debian.file)
        return DumpTarget(TargetKind.LOCAL, paths.DEFAULT_DUMP_DIR, None, debian.file)
    if isinstance(rhel, KdumpConfig):
        path = rhel.get("path")
        directory = path.value if path is not None else paths.DEFAULT_DUMP_DIR
        for entry in rhel.entries:
            if entry.key in ("nfs", "ssh"):
                return DumpTarget(TargetKind.REMOTE, f"{entry.value}:{directory}", entry, rhel.file)
            if entry.key == "raw" or entry.key in KDUMP_CONF_FS_TYPES:
                return DumpTarget(TargetKind.DEVICE, f"{entry.value} ({entry.key})", entry, rhel.file)
        return DumpTarget(TargetKind.LOCAL, directory, path, rhel.file)
    return DumpTarget(TargetKind.LOCAL, paths.DEFAULT_DUMP_DIR, None, None)


def _ssh_key(
    reader: RootReader, target: DumpTarget, debian: KdumpConfig | NotAvailable, rhel: KdumpConfig | NotAvailable
) -> SshKey | None:
    """The key an SSH target is logged in to with, and whether it exists (looked up, never read); None for another
    target.  kdump-config takes SSH_KEY when set and not empty (``${SSH_KEY:=default}``); kdumpctl takes sshkey when
    that file exists, else its default."""
    if target.entry is None or target.config is None or target.entry.key.lower() != "ssh":
        return None
    config = next(c for c in (debian, rhel) if isinstance(c, KdumpConfig) and c.file is target.config)
    family = "debian" if config is debian else "rhel"
    entry = config.get(paths.SSH_KEY_OPTION[family])
    entry = entry if entry is not None and entry.value else None
    path = entry.value if entry is not None else paths.SSH_KEY_DEFAULT
    exists = reader.look_up(path)
    if family == "debian" or path == paths.SSH_KEY_DEFAULT:
        return SshKey(path, entry, target.config, exists)
    return SshKey(path, entry, target.config, exists, paths.SSH_KEY_DEFAULT, reader.look_up(paths.SSH_KEY_DEFAULT))


def _dump_space(
    reader: RootReader, target: DumpTarget, statvfs: StatvfsProvider, unexamined: tuple[str, ...]
) -> DiskSpace | NotAvailable:
    if target.kind is not TargetKind.LOCAL:
        return NotAvailable(f"the dump goes to {target.kind.value} target {target.location}")
    if reader.root != Path("/"):
        # A copy lies on the disk of whoever copied it, not on the machine's dump target: its free space ("71785 MiB
        # free at /", the reviewer's disk; "51200 MiB free" of the host for a whole tree) says nothing of the room for
        # the machine's dump.  Only the copy's own record of it (sos' df) does.
        return _copied_df(reader, target, unexamined)
    return measure_dump_dir(reader, target.location, statvfs)


def measure_dump_dir(reader: RootReader, location: str, statvfs: StatvfsProvider) -> DiskSpace | NotAvailable:
    """The free space of the file system holding the dump directory ``location`` of the live system, by statvfs."""
    # The dump directory may not exist yet (created at dump time): measure its nearest existing parent.
    # kdump tools take relative paths from the root too.
    # A directory above it that cannot be searched (a /var this reader may not search) makes the space unknown, the
    # directory's read problem recorded: Path.is_dir raised there (exit 3, "cannot access .../var/crash").
    probe = "/" + location.strip("/")
    while probe != "/":
        found = reader.look_up(probe)
        if isinstance(found, NotAvailable):
            return NotAvailable(f"cannot measure free space for {location}: {found.reason}")
        if found and reader.host_path(probe).is_dir():
            break
        probe = probe.rsplit("/", 1)[0] or "/"
    try:
        vfs = statvfs(str(reader.host_path(probe)))
    except OSError as exc:
        return NotAvailable(f"cannot measure free space of {probe}: {exc.strerror or exc}")
    return DiskSpace(location, probe, vfs.f_bavail * vfs.f_frsize, vfs.f_blocks * vfs.f_frsize)


def _copied_df(reader: RootReader, target: DumpTarget, unexamined: tuple[str, ...]) -> DiskSpace | NotAvailable:
    """The room for the dump as the copy's df output recorded it (paths.SOS_DF): the mount holding the dump
    directory (the longest mount point above it; the last listed of equal ones, mounted over the others)."""
    what = "a partial copy" if unexamined else "a copy or a mount of another system"
    why = (
        f"free space not measured: the root {reader.root} is {what}; the disk under it here is not known to be the"
        " machine's"
    )
    file = _first_existing(reader, paths.SOS_DF)
    if isinstance(file, NotAvailable):
        return NotAvailable(f"{why}, and the copy holds no df output ({paths.SOS_DF[0]})")
    header = file.lines[0].split() if file.lines else []
    if header[1:2] != ["1K-blocks"]:
        return NotAvailable(f"{why}; {file.path} line 1 is not df's header in 1K blocks")
    directory = "/" + target.location.strip("/")
    best: tuple[int, int, list[str]] | None = None  # (mount point length, line, fields)
    pending: list[str] = []
    for number, line in enumerate(file.lines[1:], 2):
        # A long device name is on a line of its own, its numbers on the next (df before coreutils 8.11).
        fields = pending + line.split()
        pending = fields if len(fields) == 1 else []
        if len(fields) < 6 or not all(_digits(f) for f in fields[1:4]):
            continue
        mount = " ".join(fields[5:])
        holds = directory == mount or directory.startswith(mount.rstrip("/") + "/")
        if holds and (best is None or len(mount) >= best[0]):
            best = (len(mount), number, fields)
    if best is None:
        return NotAvailable(f"{why}; {file.path} lists no mount holding {target.location}")
    _, number, fields = best
    kib = 1024
    return DiskSpace(target.location, " ".join(fields[5:]), int(fields[3]) * kib, int(fields[1]) * kib, file, number)


def _kernel_memory(reader: RootReader, path: str) -> int | NotAvailable:
    """Memory the kernel image needs once loaded: x86 bzImage ``init_size``, else the file size."""
    head = reader.read_bytes(path, limit=0x270)
    if isinstance(head, NotAvailable):
        return head
    # x86 boot protocol >= 2.10: "HdrS" at 0x202, init_size (u32) at 0x260.
    if len(head) >= 0x264 and head[0x202:0x206] == b"HdrS":
        (init_size,) = struct.unpack_from("<I", head, 0x260)
        if init_size:
            return int(init_size)
    return reader.size(path)


def _images(reader: RootReader, family: DistroFamily, release: str | NotAvailable) -> BootImages:
    if isinstance(release, NotAvailable):
        kernels: list[str] = []
        initrds: list[str] = []
    else:
        kernels = [f"/boot/vmlinuz-{release}", "/var/lib/kdump/vmlinuz", f"/boot/vmlinux-{release}"]
        if family is DistroFamily.RHEL:
            initrds = [f"/boot/initramfs-{release}kdump.img", f"/boot/initramfs-{release}.img"]
        else:
            initrds = [f"/var/lib/kdump/initrd.img-{release}", f"/boot/initrd.img-{release}"]
    kernel = next((k for k in kernels if reader.exists(k)), None)
    initrd = next((i for i in initrds if reader.exists(i)), None)
    modules = reader.read_text(paths.MODULES)
    module_bytes: int | NotAvailable = modules if isinstance(modules, NotAvailable) else 0
    count = 0
    if isinstance(modules, TextFile) and isinstance(module_bytes, int):
        for line in modules.lines:
            words = line.split()
            if len(words) > 1 and _digits(words[1]):
                module_bytes += int(words[1])
                count += 1
    why = NotAvailable("the running kernel release is not known") if isinstance(release, NotAvailable) else None
    return BootImages(
        kernel_path=kernel or why or missing(kernels[0]),
        kernel_bytes=_kernel_memory(reader, kernel) if kernel else (why or missing(kernels[0])),
        initrd_path=initrd or why or missing(initrds[0]),
        initrd_bytes=reader.size(initrd) if initrd else (why or missing(initrds[0])),
        modules_bytes=module_bytes,
        modules_count=count,
    )


def _boot_config(reader: RootReader) -> BootConfig:
    names = [paths.GRUB_DEFAULT, paths.KERNEL_CMDLINE]
    names += [f"{paths.GRUB_D}/{n}" for n in reader.listdir(paths.GRUB_D) if n.endswith(".cfg")]
    names += [f"{paths.BLS_ENTRIES}/{n}" for n in reader.listdir(paths.BLS_ENTRIES) if n.endswith(".conf")]
    files = []
    found = []
    for name in names:
        file = reader.read_text(name)
        if isinstance(file, NotAvailable):
            continue
        files.append(file)
        for number, line in enumerate(file.lines, 1):
            if line.lstrip().startswith("#"):
                continue
            for match in _CRASHKERNEL.finditer(line):
                found.append((file, number, match.group(1)))
    uefi = _uefi_boot(reader)
    generated, entries = _generated_boot(reader, uefi)
    esp: tuple[str, ...] = ()
    if isinstance(generated, BootEntry) and not generated.bls and uefi is not False:
        # The ESP's grub.cfg files a UEFI boot may read instead of the one judged (not known to be a UEFI boot).
        esp = tuple(p for p in _esp_grub_cfg(reader) if p != generated.file.path)
    return BootConfig(tuple(files), tuple(found), generated, entries, esp, uefi)


def _uefi_boot(reader: RootReader) -> bool | None:
    """Whether the running system booted by UEFI: the kernel makes /sys/firmware/efi on a UEFI boot only.  None where
    that is not known: a --root tree whose /sys holds no /sys/firmware (an offline tree, a partial copy), a lookup
    that failed."""
    found = reader.look_up(paths.EFI_FIRMWARE)
    if found is True:
        return True
    if isinstance(found, NotAvailable):
        return None
    return False if reader.root == Path("/") or reader.look_up("/sys/firmware") is True else None


def _esp_grub_cfg(reader: RootReader) -> tuple[str, ...]:
    """The ESP's EFI/<vendor>/grub.cfg files that hold entries (a ``linux`` line): a UEFI boot reads one of them
    rather than /boot/grub2/grub.cfg (RHEL 7, Fedora < 34); the stub of later releases (``configfile``) has none."""
    found = []
    for vendor in reader.listdir(paths.ESP_EFI):
        path = f"{paths.ESP_EFI}/{vendor}/grub.cfg"
        if reader.look_up(path) is not True:
            continue
        file = reader.read_text(path)
        if isinstance(file, TextFile) and any(_GRUB_LINUX.match(line) for line in file.lines):
            found.append(path)
    return tuple(found)


_GRUB_MENUENTRY = re.compile(r"""^\s*menuentry\s+(?:'([^']*)'|"([^"]*)")""")
#: grub-mkconfig's marker of each grub.d script's output ("### BEGIN /etc/grub.d/10_linux ###").
_GRUB_SECTION = re.compile(r"^### BEGIN (\S+) ###")
_GRUB_LINUX = re.compile(r"^\s*(?:linux|linuxefi|linux16)\s+(\S+)(.*)$")
#: What the boot loader offers: the default entry (or why it was not read) and every entry, the default among them.
_Offered = tuple[BootEntry | NotAvailable, tuple[BootEntry, ...]]


def _generated_boot(reader: RootReader, uefi: bool | None) -> _Offered:
    """The entries of what the boot loader boots, and the default one: BLS entries where there are any (GRUB's
    blscfg and systemd-boot read them), else grub.cfg as grub-mkconfig wrote it (the ESP's EFI/<vendor>/grub.cfg
    where a UEFI boot reads it: :func:`_esp_boot`); NotAvailable saying why none was read."""
    names = [n for n in reader.listdir(paths.BLS_ENTRIES) if n.endswith(".conf")]
    if names:
        return _bls_entries(reader, paths.BLS_ENTRIES, names)
    denied = next((p for p in reader.problems if p.path == paths.BLS_ENTRIES), None)
    if denied is not None:
        # RHEL keeps /boot/loader/entries root-only: its entries are what boots, and grub.cfg (root-only too) only
        # points at them; reading it would add a second unreadable file for one cause.
        return NotAvailable(f"cannot read {paths.BLS_ENTRIES}: {denied.reason}"), ()
    esp = _esp_boot(reader, uefi)
    if esp is not None:
        return esp
    why: list[str] = []
    for path in paths.GRUB_CFG:
        file = reader.read_text(path)
        if isinstance(file, NotAvailable):
            why.append(file.reason)
            continue
        entries = _grub_entries(file)
        default = next((e for e in entries if not e.recovery), None)
        if default is not None:
            return default, entries
        why.append(f"{path} has no linux line")
    absent = all("does not exist" in reason for reason in why)
    for directory in paths.ESP_ENTRIES if absent else ():
        # No GRUB: systemd-boot's entries on the ESP, which kernel-install writes from /etc/kernel/cmdline.
        names = [n for n in reader.listdir(directory) if n.endswith(".conf")]
        if names:
            return _bls_entries(reader, directory, names)
    if absent:
        return NotAvailable(f"neither {' nor '.join(paths.GRUB_CFG)} nor {paths.BLS_ENTRIES}/*.conf exist"), ()
    return NotAvailable("; ".join(r for r in why if "does not exist" not in r)), ()


def _esp_boot(reader: RootReader, uefi: bool | None) -> _Offered | None:
    """The entries of the ESP's grub.cfg (EFI/<vendor>/grub.cfg with entries of its own: RHEL 7, Fedora < 34) where a
    UEFI boot reads it: the boot is known to be UEFI (/sys/firmware/efi), or no /boot/grub*/grub.cfg exists (only a
    UEFI GRUB has a configuration then).  None elsewhere: /boot/grub2/grub.cfg is judged, the ESP's named beside it.

    The check read /boot/grub2/grub.cfg alone: on a UEFI RHEL 7 (no /boot/grub2/grub.cfg) what boots was "neither
    /boot/grub/grub.cfg nor /boot/grub2/grub.cfg nor /boot/loader/entries/*.conf exist", never read."""
    if uefi is False:
        return None
    if uefi is None and any(reader.look_up(path) is not False for path in paths.GRUB_CFG):
        return None
    for path in _esp_grub_cfg(reader):
        file = reader.read_text(path)
        entries = _grub_entries(file) if isinstance(file, TextFile) else ()
        default = next((e for e in entries if not e.recovery), None)
        if default is not None:
            return default, entries
    return None


def _grub_entries(file: TextFile) -> tuple[BootEntry, ...]:
    """Every ``linux`` line of grub.cfg, with its menuentry's title: the first outside a recovery entry is the
    default entry (GRUB_DEFAULT=0).

    Recovery entries get GRUB_CMDLINE_LINUX but not GRUB_CMDLINE_LINUX_DEFAULT, where kdump-tools puts
    crashkernel=: judged as the default, they would say it is missing from the entry that boots.
    """
    title = section = ""
    entries = []
    for number, line in enumerate(file.lines, 1):
        if m := _GRUB_SECTION.match(line):
            section = m.group(1)
            continue
        if m := _GRUB_MENUENTRY.match(line):
            title = m.group(1) or m.group(2) or ""
            continue
        m = _GRUB_LINUX.match(line)
        if m is None:
            continue
        args = tuple(m.group(2).split())
        recovery = "recovery mode" in title or "single" in args
        entry = BootEntry(file, number, m.group(1), args, bls=False, title=title, recovery=recovery, section=section)
        entries.append(entry)
    return tuple(entries)


_BlsKeys = dict[str, tuple[int, str]]


def _bls_entries(reader: RootReader, directory: str, names: list[str]) -> _Offered:
    """The BLS entries of ``directory``, each with its ``options`` line, and the one the boot loader boots
    (:func:`_default_bls`): the next boot is judged, whichever kernel runs now."""
    entries: list[tuple[TextFile, _BlsKeys]] = []
    unread: list[str] = []
    for name in names:
        file = reader.read_text(f"{directory}/{name}")
        if isinstance(file, NotAvailable):
            unread.append(file.reason)
            continue
        keys: _BlsKeys = {}
        for number, line in enumerate(file.lines, 1):
            key, _, value = line.strip().partition(" ")
            if key == "options" and key in keys:
                # The BLS spec: options "may appear more than once", their values are concatenated.  The line cited
                # is the one with crashkernel= (the last that has it), else the first.
                first, joined = keys[key]
                at = number if "crashkernel=" in value else first
                keys[key] = (at, f"{joined} {value.strip()}")
            elif key and not key.startswith("#"):
                keys.setdefault(key, (number, value.strip()))
        entries.append((file, keys))
    if not entries:
        return NotAvailable("; ".join(unread) or f"no entry in {directory}"), ()
    env = reader.read_text(paths.GRUBENV)
    usual = [e for e in entries if "rescue" not in e[0].path] or entries
    default = _default_bls(env, usual)
    offered = [(file, _bls_boot_entry(file, keys, env)) for file, keys in entries]
    read = tuple(entry for _, entry in offered if isinstance(entry, BootEntry))
    return next(entry for file, entry in offered if file is default[0]), read


def _bls_boot_entry(file: TextFile, keys: _BlsKeys, env: MaybeFile) -> BootEntry | NotAvailable:
    """One BLS entry as the boot loader boots it: its ``options`` (``$kernelopts`` expanded from grubenv)."""
    if "options" not in keys:
        return NotAvailable(f"{file.path} has no options line")
    number, options = keys["options"]
    title = keys.get("title", (0, ""))[1]
    kernel = keys.get("linux", (0, ""))[1]
    rescue = "rescue" in file.path.rsplit("/", 1)[-1]
    if "$kernelopts" in options:
        # RHEL 8: the options live in grubenv's kernelopts= (grub2-editenv), and the entry names the variable.
        found = (
            next(((n, ln.partition("=")[2]) for n, ln in enumerate(env.lines, 1) if ln.startswith("kernelopts=")), None)
            if isinstance(env, TextFile)
            else None
        )
        if found is None or not isinstance(env, TextFile):
            why = env.reason if isinstance(env, NotAvailable) else f"{paths.GRUBENV} sets no kernelopts="
            return NotAvailable(f"{file.path} line {number} takes its options from $kernelopts: {why}")
        args = tuple(options.replace("$kernelopts", found[1]).split())
        return BootEntry(file, number, kernel, args, bls=True, env=env, env_line=found[0], title=title, recovery=rescue)
    return BootEntry(file, number, kernel, tuple(options.split()), bls=True, title=title, recovery=rescue)


_VERSION_PART = re.compile(r"\d+|[A-Za-z]+")


def _version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """An rpmvercmp-like key: numeric parts compare as numbers and above alphabetic ones (5.14.0-503 > 5.14.0-427)."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in _VERSION_PART.findall(version))


def _default_bls(env: MaybeFile, entries: list[tuple[TextFile, _BlsKeys]]) -> tuple[TextFile, _BlsKeys]:
    """The entry GRUB's blscfg boots: grubenv's saved_entry (grubby --set-default writes it) when it names one, else
    the highest version (blscfg sorts entries newest first; systemd-boot does too)."""
    if isinstance(env, TextFile):
        saved = next((ln.partition("=")[2].strip() for ln in env.lines if ln.startswith("saved_entry=")), "")
        named = next((e for e in entries if e[0].path.rsplit("/", 1)[-1].removesuffix(".conf") == saved), None)
        if saved and named is not None:
            return named
    return max(entries, key=lambda e: _version_key(e[1].get("version", (0, ""))[1]))


def _build_id(notes: bytes) -> str | NotAvailable:
    """The GNU build id among the ELF notes of /sys/kernel/notes."""
    offset = 0
    while offset + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from("<III", notes, offset)
        name_at = offset + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        if kind == _NT_GNU_BUILD_ID and notes[name_at : name_at + namesz].rstrip(b"\0") == b"GNU":
            return notes[desc_at : desc_at + descsz].hex()
        offset = desc_at + (descsz + 3) // 4 * 4
    return NotAvailable("no GNU build id note in /sys/kernel/notes")


#: dpkg's status file may be far larger than a configuration file; cut short, a package after the cut would read as
#: absent, so a file this long is not judged.
_DPKG_STATUS_LIMIT = 64 << 20


def _dpkg_kernel(status: TextFile, release: str) -> tuple[str | None, int]:
    """The installed package of the kernel ``release`` in dpkg's status file, and its ``Package:`` line."""
    wanted = {f"linux-image-{release}", f"linux-image-unsigned-{release}", f"linux-image-{release}-unsigned"}
    name: str | None = None
    at = 0
    installed = False
    for number, line in enumerate((*status.lines, ""), 1):
        if not line.strip():  # the end of a stanza
            if name in wanted and installed:
                return name, at
            name, installed = None, False
        elif line.startswith("Package:"):
            name, at = line.partition(":")[2].strip(), number
        elif line.startswith("Status:"):
            installed = line.split()[-1:] == ["installed"]  # "install ok installed"; not "config-files"
    return None, 0


def _kernel_package(reader: RootReader, family: DistroFamily, release: str) -> KernelPackage:
    """Which package installed the running kernel: dpkg's status file is read; the rpm database is not (a
    binary database: whether a RHEL-family kernel came from a package stays unknown)."""
    version = reader.read_text(paths.PROC_VERSION)
    if family is DistroFamily.RHEL or (family is DistroFamily.UNKNOWN and reader.exists(paths.RPM_DB)):
        return KernelPackage(NotAvailable("the rpm database is not read by kforensic"), None, version=version)
    status = reader.read_text(paths.DPKG_STATUS, limit=_DPKG_STATUS_LIMIT)
    if isinstance(status, NotAvailable):
        return KernelPackage(status, None, version=version)
    size = reader.size(paths.DPKG_STATUS)
    if not isinstance(size, int) or size > _DPKG_STATUS_LIMIT:
        return KernelPackage(NotAvailable(f"{paths.DPKG_STATUS} is longer than read"), None, version=version)
    package, line = _dpkg_kernel(status, release)
    return KernelPackage(paths.DPKG_STATUS, package, status, line, version)


def _debuginfo(reader: RootReader, release: str | NotAvailable, family: DistroFamily) -> DebugInfo:
    notes = reader.read_bytes(paths.KERNEL_NOTES)
    build_id = notes if isinstance(notes, NotAvailable) else _build_id(notes)
    candidates = []
    if isinstance(release, str):
        candidates += [
            f"/usr/lib/debug/boot/vmlinux-{release}",
            f"/usr/lib/debug/lib/modules/{release}/vmlinux",
            f"/boot/vmlinux-{release}",
            f"/lib/modules/{release}/build/vmlinux",
        ]
    if isinstance(build_id, str) and len(build_id) > 2:
        candidates.append(f"/usr/lib/debug/.build-id/{build_id[:2]}/{build_id[2:]}.debug")
    urls: list[str] = []
    url_file: TextFile | None = None
    for name in reader.listdir(paths.DEBUGINFOD_DIR):
        if not name.endswith(".urls"):
            continue
        file = reader.read_text(f"{paths.DEBUGINFOD_DIR}/{name}")
        if isinstance(file, TextFile):
            found = [u for line in file.lines if not line.lstrip().startswith("#") for u in line.split()]
            if found and url_file is None:
                url_file = file
            urls += found
    if reader.root == Path("/"):
        urls += os.environ.get("DEBUGINFOD_URLS", "").split()
    return DebugInfo(
        release=release,
        build_id=build_id,
        vmlinux=tuple(c for c in candidates if reader.exists(c)),
        debuginfod_urls=tuple(dict.fromkeys(urls)),
        debuginfod_file=url_file,
        origin=_kernel_package(reader, family, release) if isinstance(release, str) else None,
    )
