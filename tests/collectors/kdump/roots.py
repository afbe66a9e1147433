"""Fake root trees of Debian 12, Ubuntu 24.04, RHEL 9, Fedora and an unknown distribution.

Each scenario writes the files ``kforensic kdump`` reads (procfs, sysfs,
configs, unit links, boot images) under a directory; the contents follow the
formats the real systems use.  Free space is given by a fake statvfs.
"""

from __future__ import annotations

import gzip
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from collectors.kdump.reader import VfsStat

MIB = 1 << 20
GIB = 1 << 30

OS_RELEASE = {
    "debian12": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
    'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n',
    "ubuntu2404": 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n'
    'VERSION="24.04.1 LTS (Noble Numbat)"\nID=ubuntu\nID_LIKE=debian\n',
    "rhel9": 'NAME="Red Hat Enterprise Linux"\nVERSION="9.4 (Plow)"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.4"\n'
    'PRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"\n',
    "fedora41": 'NAME="Fedora Linux"\nVERSION="41 (Server Edition)"\nID=fedora\nVERSION_ID=41\n'
    'PRETTY_NAME="Fedora Linux 41 (Server Edition)"\n',
    "arch": 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n',
}
RELEASE = {
    "debian12": "6.1.0-18-amd64",
    "ubuntu2404": "6.8.0-45-generic",
    "rhel9": "5.14.0-427.13.1.el9_4.x86_64",
    "fedora41": "6.11.4-301.fc41.x86_64",
    "arch": "6.11.5-arch1-1",
}

DEBIAN_CONFIG = """\
# kdump-tools configuration
# ---------------------------------------------------------------------------
# USE_KDUMP - controls kdump will be configured
#     0 - kdump kernel will not be loaded
#     1 - kdump kernel will be loaded and kdump is configured
#
USE_KDUMP={use}

# KDUMP_COREDIR - local path to save the vmcore to.
KDUMP_COREDIR="/var/crash"

# MAKEDUMP_ARGS - extra arguments passed to makedumpfile (8).
MAKEDUMP_ARGS="{args}"
#KDUMP_DUMP_DMESG=
"""

RHEL_CONFIG = """\
# This file contains a series of commands to perform (in order) in the kdump
# kernel after a kernel crash in the crash kernel(1st kernel) has happened.
#
#raw /dev/vg/lv_kdump
#ext4 UUID=03138356-5e61-4ab3-b58e-27507ac41937
#nfs my.server.com:/export/tmp
auto_reset_crashkernel yes
path /var/crash
core_collector {collector}
#failure_action shell
"""


@dataclass(frozen=True)
class FakeSystem:
    """What a fake root tree holds."""

    distro: str
    ram: int = 8 * GIB
    cmdline_crashkernel: str | None = None
    boot_crashkernel: str | None = None  # in grub.d/kdump-tools.cfg (Debian) or the BLS entry (RHEL)
    crash_size: int | None = 0  # None: the sysfs file is absent (kernel without kexec)
    loaded: int | None = 0
    tooling: bool = True
    config: str | None = None  # text of the distro's kdump config; None: absent
    service_enabled: bool = True
    systemd: bool = True
    sysctls: dict[str, str] = field(default_factory=dict)
    debug_vmlinux: bool = False
    # dpkg's status file lists the running kernel's linux-image package (Debian family; False: built locally)
    kernel_package: bool = True
    free_bytes: int = 50 * GIB
    # The copy carries sos report's df output (sos_commands/filesys/df_-al_-x_autofs), ``free_bytes`` free on /: the
    # only free space a --root copy gives (the disk it lies on here is not the machine's)
    df: bool = True
    initrd_bytes: int = 18 * MIB
    extra: Callable[[Path], None] | None = None
    # False: no boot loader configuration nor tool (a VM booted directly by its VMM, Firecracker's: the kernel
    # command line is set outside the machine)
    boot_loader: bool = True
    # Where the kernel's build configuration is: "boot" (/boot/config-REL, as distributions install it), "proc"
    # (/proc/config.gz of a kernel built with CONFIG_IKCONFIG_PROC, this machine's), None: nowhere.  Its kexec
    # lines follow crash_size: an absent sysfs file is a kernel built without kexec.
    kernel_config: str | None = "boot"
    # Debian family: /boot/grub/grub.cfg as grub-mkconfig writes it from /etc/default/grub(.d): "generated" (with
    # the boot configuration's crashkernel=), "stale" (written before crashkernel= was configured: without it),
    # None: absent
    grub_cfg: str | None = "generated"

    @property
    def release(self) -> str:
        """The kernel release of the fake system."""
        return RELEASE[self.distro]

    def statvfs(self, path: str) -> VfsStat:
        """A fake statvfs: 4 KiB blocks, ``free_bytes`` available of 100 GiB."""
        return VfsStat(4096, (100 * GIB) // 4096, self.free_bytes // 4096)


def _write(root: Path, path: str, text: str | bytes) -> Path:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)
    return target


def _sparse(root: Path, path: str, size: int) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        out.truncate(size)


def _bzimage(init_size: int) -> bytes:
    """The start of an x86 bzImage: the setup header with "HdrS" and init_size."""
    head = bytearray(0x400)
    head[0x1FE:0x200] = b"\x55\xaa"
    head[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", head, 0x206, 0x020F)
    struct.pack_into("<I", head, 0x260, init_size)
    return bytes(head)


def _notes() -> bytes:
    build_id = bytes.fromhex("3f2a9c0d5e6b7a8190aabbccddeeff0011223344")
    return struct.pack("<III", 4, len(build_id), 3) + b"GNU\0" + build_id


def kernel_config(release: str, *, kexec: bool) -> str:
    """The part of a kernel's .config around its kexec options, as ``make oldconfig`` writes it: without KEXEC
    nor KEXEC_FILE, the symbols that depend on them (KEXEC_CORE, CRASH_DUMP) have no line at all."""
    head = (
        f"#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 {release} Kernel Configuration\n#\n"
        'CONFIG_CC_VERSION_TEXT="gcc (Debian 12.2.0-14) 12.2.0"\nCONFIG_CC_IS_GCC=y\n'
        "#\n# Kexec and crash features\n#\n"
    )
    if kexec:
        kexec_lines = (
            "CONFIG_CRASH_RESERVE=y\nCONFIG_VMCORE_INFO=y\nCONFIG_KEXEC_CORE=y\nCONFIG_KEXEC=y\nCONFIG_KEXEC_FILE=y\n"
            "CONFIG_CRASH_DUMP=y\n"
        )
    else:
        kexec_lines = "# CONFIG_KEXEC is not set\n# CONFIG_KEXEC_FILE is not set\n"
    tail = "# end of Kexec and crash features\nCONFIG_PROC_KCORE=y\nCONFIG_IKCONFIG=y\n"
    return head + kexec_lines + tail


DEFAULT_SYSCTLS = {
    "panic_on_oops": "1",
    "panic_on_warn": "0",
    "hung_task_panic": "0",
    "softlockup_panic": "0",
    "hardlockup_panic": "0",
    "panic_on_rcu_stall": "0",
    "panic": "0",
    "sysrq": "438",
}


def build(root: Path, system: FakeSystem) -> Path:
    """Write the tree of ``system`` under ``root`` and return ``root``."""
    debian = system.distro in ("debian12", "ubuntu2404")
    rel = system.release
    root.mkdir(parents=True, exist_ok=True)
    _write(root, "/etc/os-release", OS_RELEASE[system.distro])
    _write(root, "/etc/hostname", f"{system.distro}-host\n")
    boot_image = f"BOOT_IMAGE=/boot/vmlinuz-{rel} root=UUID=6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60 ro quiet"
    ck = f" crashkernel={system.cmdline_crashkernel}" if system.cmdline_crashkernel else ""
    _write(root, "/proc/cmdline", f"{boot_image}{ck}\n")
    if system.crash_size is not None:
        _write(root, "/sys/kernel/kexec_crash_size", f"{system.crash_size}\n")
    if system.loaded is not None:
        _write(root, "/sys/kernel/kexec_crash_loaded", f"{system.loaded}\n")
    _write(root, "/sys/kernel/notes", _notes())
    _write(root, "/proc/sys/kernel/osrelease", f"{rel}\n")
    _write(root, "/proc/sys/kernel/arch", "x86_64\n")
    for name, value in {**DEFAULT_SYSCTLS, **system.sysctls}.items():
        _write(root, f"/proc/sys/kernel/{name}", f"{value}\n")
    kib = system.ram // 1024
    _write(
        root,
        "/proc/meminfo",
        f"MemTotal:       {kib - 200000} kB\nMemFree:        {kib // 2} kB\nMemAvailable:   {kib * 3 // 4} kB\n"
        f"Buffers:          {kib // 64} kB\nCached:         {kib // 8} kB\nAnonPages:      {kib // 8} kB\n",
    )
    _write(
        root,
        "/proc/iomem",
        "00000000-00000fff : Reserved\n00001000-0009fbff : System RAM\n00100000-bffdffff : System RAM\n"
        "  01000000-01e02616 : Kernel code\n"
        f"100000000-{0x100000000 + system.ram - 0xC0000000 - 1:x} : System RAM\n",
    )
    _write(
        root,
        "/proc/modules",
        "ext4 1060864 1 - Live 0x0000000000000000\nvirtio_blk 24576 2 - Live 0x0000000000000000\n"
        "mbcache 16384 1 ext4, Live 0x0000000000000000\njbd2 196608 1 ext4, Live 0x0000000000000000\n",
    )
    _write(root, f"/boot/vmlinuz-{rel}", _bzimage(30 * MIB))
    if system.kernel_config == "boot":
        _write(root, f"/boot/config-{rel}", kernel_config(rel, kexec=system.crash_size is not None))
    elif system.kernel_config == "proc":
        _write(root, "/proc/config.gz", gzip.compress(kernel_config(rel, kexec=system.crash_size is not None).encode()))
    _sparse(
        root, f"/var/lib/kdump/initrd.img-{rel}" if debian else f"/boot/initramfs-{rel}kdump.img", system.initrd_bytes
    )
    (root / "var/crash").mkdir(parents=True, exist_ok=True)
    (root / "etc/sysctl.d").mkdir(parents=True, exist_ok=True)
    for programs in ("usr/bin", "usr/sbin"):  # every installed system has both, its kdump tooling or not
        (root / programs).mkdir(parents=True, exist_ok=True)
    if system.systemd:
        _write(root, "/usr/lib/systemd/systemd", b"\x7fELF")
    if system.tooling:
        tools = ["/usr/sbin/kdump-config", "/usr/sbin/makedumpfile", "/usr/sbin/kexec"] if debian else []
        if system.distro in ("rhel9", "fedora41"):
            tools = ["/usr/bin/kdumpctl", "/usr/sbin/makedumpfile", "/usr/sbin/kexec"]
        for tool in tools:
            _write(root, tool, "#!/bin/sh\n").chmod(0o755)
    _boot_and_config(root, system, debian)
    if system.service_enabled and system.tooling:
        unit = "kdump-tools.service" if debian else "kdump.service"
        link = root / "etc/systemd/system/multi-user.target.wants" / unit
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(f"/usr/lib/systemd/system/{unit}", link)
    if debian:
        _write(root, "/var/lib/dpkg/status", _dpkg_status(rel if system.kernel_package else None))
    if system.debug_vmlinux:
        _sparse(root, f"/usr/lib/debug/boot/vmlinux-{rel}", 4096)
    if system.df:
        _write(root, "/sos_commands/filesys/df_-al_-x_autofs", sos_df(system.free_bytes))
    if system.extra is not None:
        system.extra(root)
    return root


def sos_df(free_bytes: int, mounts: tuple[tuple[str, int], ...] = ()) -> str:
    """``df -al -x autofs`` as sos report records it: pseudo file systems (all zero), / of 100 GiB with
    ``free_bytes`` available, /boot, then ``mounts`` (mount point, bytes available) of 10 GiB each."""
    lines = ["Filesystem     1K-blocks     Used Available Use% Mounted on"]
    lines += [
        "sysfs                  0        0         0    - /sys",
        "proc                   0        0         0    - /proc",
    ]

    def row(device: str, total: int, free: int, mount: str) -> str:
        used = (total - free) // 1024
        percent = -(-100 * used // max(used + free // 1024, 1))
        return f"{device:<14} {total // 1024:>9} {used:>8} {free // 1024:>9} {percent:>3}% {mount}"

    lines.append(row("/dev/vda1", 100 * GIB, free_bytes, "/"))
    lines.append(row("/dev/vda2", GIB, GIB // 2, "/boot"))
    lines += [row(f"/dev/vdb{n}", 10 * GIB, free, mount) for n, (mount, free) in enumerate(mounts, 1)]
    return "\n".join(lines) + "\n"


def _boot_and_config(root: Path, system: FakeSystem, debian: bool) -> None:
    """The boot loader configuration and tool (none without a boot loader) and the kdump configuration."""
    rel = system.release
    # The boot loader tools come with grub, not with the kdump tooling.
    if system.boot_loader:
        _write(root, "/usr/sbin/update-grub" if debian else "/usr/sbin/grubby", "#!/bin/sh\n").chmod(0o755)
    if debian:
        if system.boot_loader:
            _write(root, "/etc/default/grub", 'GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\n')
        if system.boot_loader and system.boot_crashkernel:
            _write(
                root,
                "/etc/default/grub.d/kdump-tools.cfg",
                f'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT crashkernel={system.boot_crashkernel}"\n',
            )
        if system.boot_loader and system.grub_cfg is not None:
            ck = system.boot_crashkernel if system.grub_cfg == "generated" else None
            _write(root, "/boot/grub/grub.cfg", grub_cfg(rel, OS_RELEASE[system.distro], ck))
        if system.config is not None:
            _write(root, "/etc/default/kdump-tools", system.config)
    elif system.distro in ("rhel9", "fedora41"):
        options = "root=UUID=6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60 ro"
        if system.boot_crashkernel:
            options += f" crashkernel={system.boot_crashkernel}"
        _write(
            root,
            f"/boot/loader/entries/0123456789abcdef-{rel}.conf",
            f"title {OS_RELEASE[system.distro].split('PRETTY_NAME=')[1].splitlines()[0].strip(chr(34))}\n"
            f"version {rel}\nlinux /vmlinuz-{rel}\ninitrd /initramfs-{rel}.img\noptions {options}\n",
        )
        _write(root, "/etc/default/grub", 'GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="rhgb quiet"\n')
        if system.config is not None:
            _write(root, "/etc/kdump.conf", system.config)


def grub_cfg(release: str, os_release: str, crashkernel: str | None) -> str:
    """/boot/grub/grub.cfg as Debian's update-grub writes it (abridged): the default entry, then the advanced
    submenu with the same kernel and its recovery entry (which gets GRUB_CMDLINE_LINUX only, no crashkernel=)."""
    name = os_release.split("NAME=")[1].splitlines()[0].strip('"')
    uuid = "6c3b5f1e-0d4a-4c55-9a2f-1b2c3d4e5f60"
    ck = f" crashkernel={crashkernel}" if crashkernel else ""

    def entry(title: str, args: str, indent: str) -> str:
        return (
            f"{indent}menuentry '{title}' --class debian --class gnu-linux --class gnu --class os "
            f"$menuentry_id_option 'gnulinux-{release}-advanced-{uuid}' {{\n"
            f"{indent}\tload_video\n{indent}\tinsmod gzio\n{indent}\tinsmod part_gpt\n{indent}\tinsmod ext2\n"
            f"{indent}\techo\t'Loading Linux {release} ...'\n"
            f"{indent}\tlinux\t/boot/vmlinuz-{release} root=UUID={uuid} ro {args}\n"
            f"{indent}\techo\t'Loading initial ramdisk ...'\n{indent}\tinitrd\t/boot/initrd.img-{release}\n{indent}}}\n"
        )

    return (
        "#\n# DO NOT EDIT THIS FILE\n#\n# It is automatically generated by grub-mkconfig using templates\n"
        "# from /etc/grub.d and settings from /etc/default/grub\n#\n\n### BEGIN /etc/grub.d/00_header ###\n"
        'if [ -s $prefix/grubenv ]; then\n  load_env\nfi\nset default="0"\n### END /etc/grub.d/00_header ###\n\n'
        "### BEGIN /etc/grub.d/10_linux ###\n"
        + entry(name, f" quiet{ck}", "")
        + f"submenu 'Advanced options for {name}' $menuentry_id_option 'gnulinux-advanced-{uuid}' {{\n"
        + entry(f"{name}, with Linux {release}", f" quiet{ck}", "\t")
        + entry(f"{name}, with Linux {release} (recovery mode)", " single", "\t")
        + "}\n### END /etc/grub.d/10_linux ###\n"
    )


def _dpkg_stanza(package: str, status: str, version: str, extra: str = "") -> str:
    return (
        f"Package: {package}\nStatus: {status}\nPriority: optional\nSection: kernel\nInstalled-Size: 400123\n"
        "Maintainer: Debian Kernel Team <debian-kernel@lists.debian.org>\nArchitecture: amd64\n"
        f"Source: linux-signed-amd64\nVersion: {version}\n{extra}Description: Linux kernel image\n"
    )


def _dpkg_status(release: str | None) -> str:
    """dpkg's status file: a removed older kernel (its config files left), and the running one when packaged."""
    stanzas = [
        "Package: base-files\nEssential: yes\nStatus: install ok installed\nPriority: required\nSection: admin\n"
        "Maintainer: Santiago Vila <sanvila@debian.org>\nArchitecture: amd64\nVersion: 12.4+deb12u5\n"
        "Description: Debian base system miscellaneous files\n",
        _dpkg_stanza("linux-image-6.1.0-17-amd64", "deinstall ok config-files", "6.1.69-1"),
    ]
    if release is not None:
        stanzas.append(_dpkg_stanza(f"linux-image-{release}", "install ok installed", "6.1.76-1", "Depends: kmod\n"))
    return "\n".join(stanzas)


def _unreadable_config(root: Path) -> None:
    # A directory where the config file should be: reading it fails with EISDIR, even as root.
    path = root / "etc/default/kdump-tools"
    path.unlink()
    path.mkdir()


_DEBIAN_READY = FakeSystem(
    distro="debian12",
    ram=4 * GIB,
    cmdline_crashkernel="384M-:128M",
    boot_crashkernel="384M-:128M",
    crash_size=128 * MIB,
    loaded=1,
    config=DEBIAN_CONFIG.format(use=1, args="-c -d 31"),
    sysctls={"panic": "10"},
    debug_vmlinux=True,
)
_UBUNTU_CK = "2G-4G:320M,4G-32G:512M,32G-64G:1024M,64G-128G:2048M,128G-:4096M"
_UBUNTU_READY = FakeSystem(
    distro="ubuntu2404",
    ram=16 * GIB,
    cmdline_crashkernel=_UBUNTU_CK,
    boot_crashkernel=_UBUNTU_CK,
    crash_size=512 * MIB,
    loaded=1,
    config=DEBIAN_CONFIG.format(use=1, args="-l -d 31"),
)
_RHEL_CK = "1G-4G:192M,4G-64G:256M,64G-:512M"
_RHEL_READY = FakeSystem(
    distro="rhel9",
    cmdline_crashkernel=_RHEL_CK,
    boot_crashkernel=_RHEL_CK,
    crash_size=256 * MIB,
    loaded=1,
    config=RHEL_CONFIG.format(collector="makedumpfile -l --message-level 7 -d 31"),
    sysctls={"panic": "10"},
)

#: Every scenario of the golden tests, by name.
SCENARIOS: dict[str, FakeSystem] = {
    "debian12-ready": _DEBIAN_READY,
    "debian12-no-crashkernel": replace(
        _DEBIAN_READY, cmdline_crashkernel=None, boot_crashkernel=None, crash_size=0, loaded=0
    ),
    "debian12-not-loaded": replace(
        _DEBIAN_READY, loaded=0, service_enabled=False, config=DEBIAN_CONFIG.format(use=0, args="-c -d 31")
    ),
    "debian12-no-tooling": replace(
        _DEBIAN_READY,
        tooling=False,
        config=None,
        cmdline_crashkernel=None,
        boot_crashkernel=None,
        crash_size=0,
        loaded=0,
    ),
    # This machine's kind (kdump check, 2026-12-06): a VM its VMM boots directly, on a kernel without kexec; no boot
    # loader configuration, no kdump tooling.
    "debian12-direct-boot": replace(
        _DEBIAN_READY,
        tooling=False,
        config=None,
        cmdline_crashkernel=None,
        boot_crashkernel=None,
        crash_size=None,
        loaded=None,
        boot_loader=False,
        kernel_config="proc",
    ),
    "debian12-unreadable-config": replace(_DEBIAN_READY, extra=_unreadable_config),
    "debian12-no-systemd": replace(_DEBIAN_READY, systemd=False, service_enabled=False),
    "ubuntu2404-lzo": _UBUNTU_READY,
    "ubuntu2404-full-disk": replace(_UBUNTU_READY, free_bytes=300 * MIB),
    "ubuntu2404-small-reservation": replace(_UBUNTU_READY, cmdline_crashkernel="64M", crash_size=64 * MIB),
    "ubuntu2404-no-crashkernel": replace(
        _UBUNTU_READY, cmdline_crashkernel=None, boot_crashkernel=None, crash_size=0, loaded=0
    ),
    "rhel9-ready": _RHEL_READY,
    "rhel9-no-crashkernel": replace(
        _RHEL_READY, cmdline_crashkernel=None, boot_crashkernel=None, crash_size=0, loaded=0, service_enabled=False
    ),
    "rhel9-malformed-conf": replace(
        _RHEL_READY,
        loaded=0,
        config=RHEL_CONFIG.format(collector="makedumpfile -l --message-level 7 -d 31")
        + "core_colector makedumpfile -c -d 31\next4\n",
    ),
    "rhel9-no-kexec-kernel": replace(_RHEL_READY, crash_size=None, loaded=None),
    "fedora41-zstd": replace(
        _RHEL_READY,
        distro="fedora41",
        config=RHEL_CONFIG.format(collector="makedumpfile -z --message-level 7 -d 31"),
    ),
    "fedora41-not-loaded": replace(
        _RHEL_READY,
        distro="fedora41",
        loaded=0,
        service_enabled=False,
        config=RHEL_CONFIG.format(collector="makedumpfile -l --message-level 7 -d 31"),
    ),
    "fedora41-dump-level-0": replace(
        _RHEL_READY,
        distro="fedora41",
        config=RHEL_CONFIG.format(collector="makedumpfile -l --message-level 7"),
    ),
    "unknown-distro": FakeSystem(distro="arch", tooling=False, systemd=False, service_enabled=False),
}
