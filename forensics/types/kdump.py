"""Typed snapshot of everything ``kforensic kdump`` reads about a system's crash-dump setup.

The collector (:mod:`collectors.kdump.state`) fills these records from a root
tree (``/`` for the running system); the detectors in :mod:`detectors.kdump`
turn them into a checklist and a setup plan without touching any file.
Paths inside records are the paths *on the target system* (``/etc/kdump.conf``);
``TextFile.source`` is the file that was actually read, so evidence can cite it.
"""

from __future__ import annotations

import difflib
import enum
import re
from dataclasses import dataclass

from forensics.model import Evidence, NotAvailable, Severity, SourceRecord
from forensics.types.kdump_paths import PROGRAM_DIRS


@dataclass(frozen=True)
class TextFile:
    """A text file that was read: its path on the target, the real file read, its lines."""

    path: str  # path on the target system, e.g. /proc/cmdline
    source: str  # the file actually opened (root joined), cited by evidence
    lines: tuple[str, ...]
    # numbers of the lines that ended in a carriage return (removed from ``lines``, as evidence reads them):
    # a shell that sources the file keeps it in the value
    cr_lines: frozenset[int] = frozenset()

    def first_line(self) -> str:
        """The first line, stripped (sysfs and procfs values are one line)."""
        return self.lines[0].strip() if self.lines else ""


#: A file's text, or why it could not be had ("missing" or the OS error).
MaybeFile = TextFile | NotAvailable


class DistroFamily(enum.Enum):
    """The kdump tooling a distribution uses."""

    DEBIAN = "debian"  # kdump-tools: /etc/default/kdump-tools, kdump-config
    RHEL = "rhel"  # kexec-tools / kdump-utils: /etc/kdump.conf, kdumpctl
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Distro:
    """The distribution of the target, from /etc/os-release."""

    family: DistroFamily
    id: str  # ID= of os-release, e.g. debian, ubuntu, rhel, fedora ("" when unknown)
    version_id: str  # VERSION_ID=, e.g. 12, 24.04, 9.4 ("" when absent)
    name: str  # PRETTY_NAME= or a fallback
    evidence_line: int  # 1-based line of ID= in os-release, 0 when there is none
    like: tuple[str, ...] = ()  # ID_LIKE=, e.g. ("ubuntu", "debian") for Linux Mint


@dataclass(frozen=True)
class ConfigEntry:
    """One setting of a kdump configuration file: key, value and where it stands."""

    key: str
    value: str
    line: int  # 1-based
    text: str  # the line as written


@dataclass(frozen=True)
class ConfigProblem:
    """A line of a kdump configuration file that the tooling would reject."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class KdumpConfig:
    """A parsed kdump configuration (/etc/default/kdump-tools or /etc/kdump.conf)."""

    file: TextFile
    entries: tuple[ConfigEntry, ...]
    problems: tuple[ConfigProblem, ...]

    def get(self, key: str) -> ConfigEntry | None:
        """The effective entry for ``key`` (the last one, as the shell and kdumpctl read them)."""
        found = None
        for entry in self.entries:
            if entry.key == key:
                found = entry
        return found


@dataclass(frozen=True)
class ReadProblem:
    """A file that exists but could not be read."""

    path: str
    reason: str
    errno_name: str = ""  # EACCES, EISDIR, ... ("" when the error carried no errno)

    @property
    def denied(self) -> bool:
        """The reader lacked the right to read it: another user (root, the kdump tooling) may read it fine."""
        return self.errno_name in ("EACCES", "EPERM")

    @property
    def lasting(self) -> bool:
        """The error is what the path is (a directory, a link loop, not a regular file: stat said so): every reader
        meets it, the tooling at each boot too.  Other errors (EIO, ...) are of one read: they say nothing of the
        file's content, nor whether the next read fails."""
        return self.errno_name in ("EISDIR", "ELOOP", "ENOTDIR", "EINVAL")


@dataclass(frozen=True)
class Tooling:
    """Which kdump programs are installed under the root."""

    kdump_config: str | None  # path of kdump-config (Debian), None when absent
    kdumpctl: str | None  # path of kdumpctl (RHEL/Fedora)
    makedumpfile: str | None
    kexec: str | None
    grubby: str | None
    update_grub: str | None
    # Program directories that could not be looked into (EACCES, ELOOP): a program not found may be there.
    unsearched: tuple[ReadProblem, ...] = ()
    grub_mkconfig: str | None = None  # path of grub2-mkconfig, else grub-mkconfig


@dataclass(frozen=True)
class ServiceState:
    """Whether systemd is present and which kdump units are enabled."""

    systemd: bool  # systemd runs (the live system: /run/systemd/system), or is installed (a --root tree)
    enabled_links: tuple[str, ...]  # target paths like /etc/systemd/system/multi-user.target.wants/kdump.service
    sysv_links: tuple[str, ...]  # /etc/rc?.d/S??kdump-tools style start links
    init_scripts: tuple[str, ...] = ()  # the kdump init scripts installed (paths.INIT_SCRIPTS)
    unit_files: tuple[str, ...] = ()  # the kdump units' files installed (paths.SYSTEMD_UNIT_FILE_DIRS)


@dataclass(frozen=True)
class Sysctl:
    """A kernel sysctl read from /proc/sys."""

    name: str  # dotted name, e.g. kernel.panic_on_oops
    file: MaybeFile


@dataclass(frozen=True)
class SysctlAssignment:
    """One ``key = value`` line of the sysctl configuration applied at boot (paths.SYSCTL_DIRS, SYSCTL_CONF)."""

    name: str  # dotted name
    value: str
    file: TextFile
    line: int
    # /etc/sysctl.conf: ``sysctl --system`` applies it after every sysctl.d file, whatever their names
    last: bool = False

    def applied_after(self, file_name: str) -> bool:
        """Whether this line is applied after a sysctl.d file called ``file_name`` (which it overrides)."""
        return self.last or self.file.path.rsplit("/", 1)[-1] > file_name

    def number(self) -> int | None:
        """The value as the kernel parses an integer sysctl; None when it is not one."""
        word = self.value.split()[0] if self.value.split() else ""
        try:
            return int(word, 0) if word.lower().startswith("0x") else int(word)
        except ValueError:
            return None


@dataclass(frozen=True)
class MemInfo:
    """The /proc/meminfo counters the dump size estimate needs, in bytes."""

    total: int
    free: int
    buffers: int
    cached: int
    anon: int
    file: TextFile


class TargetKind(enum.Enum):
    """Where the dump is written."""

    LOCAL = "local"  # a directory of the root file system (or one mounted at boot)
    DEVICE = "device"  # a block device or file system named in the config, mounted by the crash kernel
    REMOTE = "remote"  # NFS or SSH


@dataclass(frozen=True)
class DumpTarget:
    """The dump destination the configuration selects."""

    kind: TargetKind
    location: str  # directory, device or host:path
    entry: ConfigEntry | None  # the config line that chose it, None for the default
    config: TextFile | None  # the file holding that line


@dataclass(frozen=True)
class SshKey:
    """The private key an SSH dump target is logged in to with: the configuration line naming it (kdump-tools'
    ``SSH_KEY``, kdump.conf's ``sshkey``) or the tooling's default, and whether the file exists.  Looked up, never
    read: it is a secret, and its existence is all the check needs."""

    path: str  # the key the configuration names, else the tooling's default (paths.SSH_KEY_DEFAULT)
    entry: ConfigEntry | None  # the line naming it, None when the default applies
    config: TextFile  # the configuration holding the SSH target (and that line)
    exists: bool | NotAvailable  # NotAvailable: its directory could not be searched (/root/.ssh is root's alone)
    # kdumpctl logs in with its default when the configured key does not exist ("WARNING: '...' doesn't exist, using
    # default value"): that default and whether it exists; "" where the tooling has no fallback (kdump-config).
    fallback: str = ""
    fallback_exists: bool | NotAvailable = False


@dataclass(frozen=True)
class DiskSpace:
    """Free space of the file system holding the dump directory."""

    path: str  # the dump directory on the target
    measured_at: str  # the existing directory that statvfs was run on, or the df line's mount point (target path)
    free_bytes: int
    total_bytes: int
    # A --root copy's own record of its free space (sos' df output) and the line of the mount holding the dump
    # directory; None where statvfs measured the live system.
    df: TextFile | None = None
    df_line: int = 0


@dataclass(frozen=True)
class BootImages:
    """Sizes of the images the crash kernel needs, for the crashkernel estimate."""

    kernel_path: str | NotAvailable
    kernel_bytes: int | NotAvailable  # memory the kernel needs (bzImage init_size, else file size)
    initrd_path: str | NotAvailable
    initrd_bytes: int | NotAvailable
    modules_bytes: int | NotAvailable  # loaded modules, from /proc/modules
    modules_count: int


@dataclass(frozen=True)
class KernelConfig:
    """The running kernel's build configuration (``/proc/config.gz`` or the distribution's ``/boot/config-REL``).

    ``options`` maps a symbol without its ``CONFIG_`` prefix to (line number, value); the value is None for a
    ``# CONFIG_X is not set`` line.  A symbol whose dependencies are off has no line at all.
    """

    file: TextFile
    options: dict[str, tuple[int, str | None]]

    def enabled(self, name: str) -> bool:
        """Whether ``CONFIG_<name>`` is built in or a module."""
        value = self.options.get(name, (0, None))[1]
        return value in ("y", "m")


def crashkernel_word(words: tuple[str, ...] | list[str]) -> str | None:
    """The crashkernel= value a kernel command line's words give the kernel: the last one, a ",low" companion
    aside (it only sizes the low part of a ",high" reservation)."""
    values = [w.removeprefix("crashkernel=") for w in words if w.startswith("crashkernel=")]
    main = [v for v in values if not v.endswith(",low")]
    chosen = main or values
    return chosen[-1] if chosen else None


@dataclass(frozen=True)
class BootEntry:
    """The kernel command line of the entry the boot loader boots, as generated from the boot configuration:
    grub.cfg's ``linux`` line (grub-mkconfig's output), or a BLS entry's ``options`` line."""

    file: TextFile  # /boot/grub/grub.cfg, /boot/grub2/grub.cfg or /boot/loader/entries/NAME.conf
    line: int  # 1-based line of the ``linux`` / ``options`` line
    kernel: str  # the image it boots (/boot/vmlinuz-REL), "" when the entry does not say
    args: tuple[str, ...]  # the command line words (BLS: with $kernelopts expanded from grubenv)
    bls: bool  # a BLS entry (edited in place by grubby / kernel-install), not a grub.cfg made by grub-mkconfig
    #: RHEL 8's ``options $kernelopts``: grubenv and the 1-based line of its ``kernelopts=``, which holds the values.
    env: TextFile | None = None
    env_line: int = 0
    title: str = ""  # grub.cfg's menuentry title, a BLS entry's ``title`` ("" when it has none)
    #: A recovery (grub-mkconfig's "recovery mode", ``single``) or rescue entry: booted to repair the system, not to
    #: run it (grub-mkconfig gives it GRUB_CMDLINE_LINUX only, without GRUB_CMDLINE_LINUX_DEFAULT's crashkernel=).
    recovery: bool = False
    #: The grub.d script whose output in grub.cfg holds the entry (``/etc/grub.d/10_linux``; 30_os-prober's boot other
    #: systems, 40_custom's are written by hand); "" for a BLS entry or outside the ``### BEGIN`` markers.
    section: str = ""

    @property
    def where(self) -> str:
        """``FILE line N``, with grubenv's line where the options come from $kernelopts."""
        where = f"{self.file.path} line {self.line}"
        return where + (f" ($kernelopts from {self.env.path} line {self.env_line})" if self.env is not None else "")

    @property
    def crashkernel(self) -> str | None:
        """The crashkernel= value the entry boots with, None when it has none."""
        return crashkernel_word(self.args)


@dataclass(frozen=True)
class BootConfig:
    """Where the persistent kernel command line lives, with any crashkernel= it sets; and what is generated from it.

    /etc/default/grub and grub.d are only inputs of grub-mkconfig: GRUB boots /boot/grub/grub.cfg, so a crashkernel=
    written there boots only once grub.cfg is regenerated (``generated`` is what the next boot uses).
    """

    files: tuple[TextFile, ...]  # /etc/default/grub, /etc/default/grub.d/*.cfg, BLS entries, /etc/kernel/cmdline
    crashkernel: tuple[tuple[TextFile, int, str], ...]  # (file, 1-based line, crashkernel=... value)
    # The default entry of the generated configuration (BLS entries where present, else grub.cfg), or why unread.
    generated: BootEntry | NotAvailable
    # Every entry the boot loader offers (``grubby --info=ALL``'s list: grub.cfg's menuentries, submenus' too, or
    # every BLS entry), the default among them, in the order read; () when ``generated`` was not read.
    entries: tuple[BootEntry, ...] = ()
    # grub.cfg files on the ESP (paths.ESP_EFI/*/grub.cfg) with entries of their own, not a stub loading
    # /boot/grub2/grub.cfg: what a UEFI boot reads (RHEL 7, Fedora < 34); looked for only where grub.cfg is judged.
    esp_grub_cfg: tuple[str, ...] = ()
    # Whether the running system booted by UEFI (/sys/firmware/efi exists), None where /sys does not say.
    uefi: bool | None = None


@dataclass(frozen=True)
class KernelPackage:
    """Whether a package installed the running kernel, as the package database under the root says.

    A locally built kernel has no distribution debug package: naming one (``linux-image-<release>-dbg``) for it
    sends the user after a package that does not exist.
    """

    database: str | NotAvailable  # the database read (/var/lib/dpkg/status, rpmdb.sqlite), or why none was
    package: str | None  # the installed package of this release, None when the database holds none
    entry: TextFile | None = None  # dpkg's status file, to cite the package's line
    line: int = 0  # 1-based line of ``Package:`` in ``entry``
    version: MaybeFile | None = None  # /proc/version: who built the kernel, with what


@dataclass(frozen=True)
class DebugInfo:
    """Whether debug info for the running kernel can be had."""

    release: str | NotAvailable
    build_id: str | NotAvailable  # hex GNU build id from /sys/kernel/notes
    vmlinux: tuple[str, ...]  # target paths of vmlinux files with debug info that exist
    debuginfod_urls: tuple[str, ...]
    debuginfod_file: TextFile | None  # the file naming the first URL, for evidence
    origin: KernelPackage | None = None  # None: not looked for (the release is not known)


_RESERVED = re.compile(r"Reserving \d+MB of memory at .*for crashkernel|crashkernel reserved: ")


@dataclass(frozen=True)
class CrashkernelLog:
    """What the kernel log says of the crashkernel= reservation at the last boot it holds (after its last
    ``Linux version`` line): the reservation or why it failed (``crashkernel reservation failed - No suitable area
    found.``)."""

    source: str  # the log read: a target path, or /dev/kmsg
    file: TextFile | None  # the file, for evidence (None for the live ring buffer, which cannot be cited again)
    lines: tuple[tuple[int, str], ...]  # (1-based line, text) of the kernel's lines that name crashkernel
    #: The release its last boot's "Linux version" line names when it is not the running kernel's (its lines are then
    #: of another boot and left out); "" when it is this boot's, or the log names none.
    other_boot: str = ""
    other_boot_line: int = 0  # 1-based line of that "Linux version"

    def reserved_line(self) -> tuple[int, str] | None:
        """The line of this boot where the kernel says it reserved the area (x86 "Reserving 128MB of memory at
        2800MB for crashkernel", arm64/riscv "crashkernel reserved: 0x... (128 MB)"), None when none does."""
        return next((item for item in self.lines if _RESERVED.search(item[1])), None)


@dataclass(frozen=True)
class KdumpState:
    """Everything read about the crash-dump setup of one system."""

    root: str
    distro: Distro
    os_release: MaybeFile
    hostname: MaybeFile
    cmdline: MaybeFile
    crash_size: MaybeFile
    crash_loaded: MaybeFile
    osrelease: MaybeFile
    arch: str | NotAvailable
    meminfo: MemInfo | NotAvailable
    system_ram_bytes: int | NotAvailable  # sum of "System RAM" in /proc/iomem, else MemTotal
    tooling: Tooling
    debian_config: KdumpConfig | NotAvailable
    rhel_config: KdumpConfig | NotAvailable
    services: ServiceState
    dump_target: DumpTarget
    sysctls: tuple[Sysctl, ...]
    dump_space: DiskSpace | NotAvailable
    images: BootImages
    boot: BootConfig
    debuginfo: DebugInfo
    # What says whether the kernel was built with kexec crash support, beside its sysfs files.
    kernel_config: KernelConfig | NotAvailable
    managed_files: tuple[tuple[str, MaybeFile], ...]  # files the setup plan may change, by target path
    problems: tuple[ReadProblem, ...]
    sources: tuple[SourceRecord, ...]
    # Of paths.SYSTEM_DIRS and paths.PROGRAM_DIRS, those absent under a --root tree: what lives there was not
    # examined, and the tree is not a whole system (never on "/").
    unexamined: tuple[str, ...] = ()
    # The kernel log's crashkernel lines, read only when the reservation is empty (why it failed), else why not.
    crash_log: CrashkernelLog | NotAvailable | None = None
    # The sysctl configuration applied at boot, every assignment in the order applied (the last of a name wins).
    boot_sysctls: tuple[SysctlAssignment, ...] = ()
    # Which figure system_ram_bytes is: "/proc/iomem System RAM" (close to the memblock total the kernel matches
    # crashkernel= ranges with) or "MemTotal" (smaller: what the kernel keeps for itself is left out); "" when neither.
    system_ram_source: str = ""
    # The key an SSH dump target is logged in to with; None when the dump does not go over SSH.
    ssh_key: SshKey | None = None

    def not_examined(self, path: str) -> str | None:
        """Why ``path`` was not examined (a directory holding it is absent under the root), None when it was."""
        where = "/" + path.strip("/")
        held = next((d for d in self.unexamined if where == d or where.startswith(d + "/")), None)
        return None if held is None else self._absent_dir(held)

    def _absent_dir(self, directory: str) -> str:
        # What the tree holds beside is not known here (a copy of /proc and /sys, of a few files of /etc): only that
        # it is not a whole system.
        what = (
            "a partial copy, not an installed system"
            if directory.count("/") == 1
            else "a partial copy: every installed system has it"
        )
        return f"not examined: the root {self.root} has no {directory} ({what})"

    def partial(self) -> str | None:
        """Why the root is not a whole system (a directory every installed one has is absent: paths.SYSTEM_DIRS,
        paths.PROGRAM_DIRS), None when it is (always on "/"): in a partial copy a file not found may just not have
        been copied, so its absence is no fault (unknown), where on a whole system it is."""
        return self._absent_dir(self.unexamined[0]) if self.unexamined else None

    def programs_not_examined(self) -> str | None:
        """Why the kdump programs were not looked for (a program directory absent under the root), None when they
        were."""
        return next((why for d in PROGRAM_DIRS if (why := self.not_examined(d))), None)

    def sysctl(self, name: str) -> MaybeFile:
        """The /proc/sys file of a sysctl, or why it is not there."""
        for item in self.sysctls:
            if item.name == name:
                return item.file
        return NotAvailable(f"{name} was not read")

    def boot_sysctl(self, name: str) -> SysctlAssignment | None:
        """The assignment of ``name`` that wins at boot; None when no configuration file sets it."""
        return next((a for a in reversed(self.boot_sysctls) if a.name == name), None)

    def managed(self, path: str) -> MaybeFile:
        """A file the setup plan may change, as read (NotAvailable when it does not exist)."""
        for target, file in self.managed_files:
            if target == path:
                return file
        return NotAvailable(f"{path} was not read")


@dataclass(frozen=True)
class AppliedChange:
    """A file written by ``kdump setup --apply``: its target path, the backup made (None for a new file)."""

    path: str
    backup: str | None


# ---------------------------------------------------------------- the crash reservation (made by detectors/kdump/)


class Status(enum.Enum):
    """Outcome of one check."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    # The value the check needs was never read (file absent or unreadable): neither a pass nor a fault.
    UNKNOWN = "unknown"
    # Made impossible by another line's failure (its root cause): shown under that cause, not counted as a fault.
    BLOCKED = "blocked"


@dataclass(frozen=True)
class Blocker:
    """The failed line that makes another impossible, and the root cause in words."""

    line_id: str  # id of the failed line, e.g. crash-reservation
    title: str  # its title, e.g. Crash kernel memory reserved
    reason: str  # e.g. the kernel has no kexec crash support


@dataclass(frozen=True)
class Estimate:
    """The recommended crash reservation and how it was reached (bytes)."""

    kernel: int | NotAvailable
    initrd: int | NotAvailable
    modules: int | NotAvailable
    runtime: int
    estimated: int  # sum of the known parts
    floor: int  # the distro default for this RAM size
    floor_source: str
    floor_crashkernel: str
    recommended: int  # max(estimated, floor), rounded up to 16 MiB
    complete: bool  # False when a part was not available (the estimate is then low)
    # False when neither a part nor the RAM was read: the sum is the run time alone and no floor applies, so no size
    # rests on a value read (an empty --root recommended "64M" from nothing)
    grounded: bool = True


def format_size(size: int) -> str:
    """A byte count the way crashkernel= writes it: the largest whole unit (``512M``, ``2G``)."""
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def describe_estimate(estimate: Estimate) -> str:
    """One line: recommended size and its parts, e.g. ``256M (kernel 60M + initrd 30M + ...)``."""

    def mib(value: int | NotAvailable) -> str:
        return f"{-(-value // (1 << 20))}M" if isinstance(value, int) else "unknown"

    named = (("kernel", estimate.kernel), ("initramfs", estimate.initrd), ("modules", estimate.modules))
    parts = (
        " + ".join(f"{name} {mib(value)}" for name, value in named)
        + f" + run time {mib(estimate.runtime)} = {'' if estimate.complete else 'at least '}{mib(estimate.estimated)}"
    )  # (a sum with unknown parts is a lower bound: "? + ? + 64M = 64M" read as the whole)
    # Each unknown part with its reason, so the reader can see what to look for (was "incomplete: ? parts were not
    # found").
    unknown = "; ".join(f"{name}: {value.reason}" for name, value in named if isinstance(value, NotAvailable))
    if not estimate.grounded:
        return (
            f"unknown (nothing it rests on was read: {unknown}; RAM: not read, so no floor from "
            f"{estimate.floor_source} {estimate.floor_crashkernel})"
        )
    partial = f"; not known, so the sum is low: {unknown}" if unknown else ""
    return (
        f"{format_size(estimate.recommended)} ({parts}; floor {mib(estimate.floor)} from {estimate.floor_source}"
        f" {estimate.floor_crashkernel}{partial})"
    )


# ---------------------------------------------------------------- the checklist and the setup plan (detectors/kdump)


@dataclass(frozen=True)
class CheckLine:
    """One line of the checklist: what was seen, why it matters, the fix, and the evidence."""

    id: str
    title: str
    status: Status
    detail: str
    why: str
    fix: str
    evidence: tuple[Evidence, ...]
    kernel_side: bool = False  # part of the kernel-side subset (reservation and loaded crash kernel)
    severity: Severity = Severity.INFO
    blocked_by: Blocker | None = None  # set with Status.BLOCKED
    # An unknown only a person can read (another machine's disk, what this init system starts at boot): setup lists
    # its fix as a manual step; other unknowns clear with what setup does or says (a package, root, a readable file).
    by_hand: bool = False


@dataclass(frozen=True)
class Checklist:
    """All check lines, the verdicts and the crashkernel estimate."""

    lines: tuple[CheckLine, ...]
    estimate: Estimate

    @property
    def ready(self) -> bool:
        """True when nothing fails and what capture rests on was read: the next crash will be captured.

        A line not read whose fault would stop or damage the capture (medium or above: the kernel side, the
        configuration, the service, the dump target) leaves the verdict unknown; a low one (a sysctl) does not.
        """
        return (
            all(line.status is not Status.FAIL for line in self.lines)
            and self.kernel_ready
            and not self.unread_needed()
        )

    def holding_back(self) -> tuple[CheckLine, ...]:
        """The lines that keep the verdict from READY (empty exactly when :attr:`ready`): each failure, each
        kernel-side line not read, and each other line not read whose fault would stop the capture."""
        unread = {id(line) for line in self.unread_needed()}
        return tuple(
            line
            for line in self.lines
            if line.status is Status.FAIL or (line.status is Status.UNKNOWN and line.kernel_side) or id(line) in unread
        )

    def unread_needed(self) -> tuple[CheckLine, ...]:
        """The lines not read (unknown) whose fault would stop or damage the capture."""
        return tuple(line for line in self.lines if line.status is Status.UNKNOWN and line.severity >= Severity.MEDIUM)

    @property
    def kernel_ready(self) -> bool:
        """True when the kernel side alone is ready (reservation made, crash kernel loaded), read, not assumed."""
        return all(line.status not in (Status.FAIL, Status.UNKNOWN) for line in self.lines if line.kernel_side)

    @property
    def unknown(self) -> bool:
        """True when nothing fails but the verdict rests on kernel-side values that could not be read."""
        return not self.ready and self.count(Status.FAIL) == 0

    def count(self, status: Status) -> int:
        """How many lines have ``status``."""
        return sum(1 for line in self.lines if line.status is status)


@dataclass(frozen=True)
class FileChange:
    """Create or rewrite one file of the target."""

    path: str  # path on the target system
    old: str | None  # current text, None when the file is created
    new: str
    reason: str

    def diff(self) -> str:
        """The change as a unified diff."""
        before = [] if self.old is None else self.old.splitlines(keepends=True)
        after = self.new.splitlines(keepends=True)
        origin = "/dev/null" if self.old is None else f"a{self.path}"
        return "".join(difflib.unified_diff(before, after, fromfile=origin, tofile=f"b{self.path}"))


@dataclass(frozen=True)
class Command:
    """A program to run on the target, as an argument list (never a shell string)."""

    argv: tuple[str, ...]
    reason: str
    #: Files the program rewrites (grub-mkconfig's grub.cfg): ``setup --apply`` copies each next to itself first.
    backup: tuple[str, ...] = ()

    def shell_text(self) -> str:
        """The argument list as a shell would read it (for display only: it is never run by a shell)."""
        import shlex

        return shlex.join(self.argv)


@dataclass(frozen=True)
class Plan:
    """Everything ``kforensic kdump setup`` would do."""

    distro: str
    family: DistroFamily
    policy: str
    packages: tuple[str, ...]
    install: Command | None
    changes: tuple[FileChange, ...]
    commands: tuple[Command, ...]
    manual: tuple[str, ...]  # steps kforensic cannot do for you
    reboot_needed: bool
    reboot_reason: str
    # What the plan could not read, so that it cannot tell all there is to do (an unreadable configuration,
    # a program directory it could not look into): never "nothing to do" while one is left.
    unread: tuple[str, ...] = ()
    # What the plan would have done and does not, each with why and what comes first (the panic sysctls of
    # --policy while no crash kernel can be loaded: they would turn an oops into a reboot with no dump).
    held_back: tuple[str, ...] = ()
    # Steps by hand on the boot loader that the reboot waits for (grub.cfg to regenerate where no update-grub is
    # under the root): while one is left the configuration is not as the plan wants it.
    boot_steps: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is nothing to install, change or run."""
        return not (self.packages or self.changes or self.commands)
