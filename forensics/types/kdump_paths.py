"""Where kdump-related files live on the target system (paths as seen from its root)."""

from __future__ import annotations

OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
HOSTNAME = "/etc/hostname"
CMDLINE = "/proc/cmdline"
KEXEC_CRASH_SIZE = "/sys/kernel/kexec_crash_size"
KEXEC_CRASH_LOADED = "/sys/kernel/kexec_crash_loaded"
KERNEL_NOTES = "/sys/kernel/notes"
OSRELEASE = "/proc/sys/kernel/osrelease"
ARCH = "/proc/sys/kernel/arch"
MEMINFO = "/proc/meminfo"
IOMEM = "/proc/iomem"
MODULES = "/proc/modules"
PROC_CONFIG_GZ = "/proc/config.gz"  # CONFIG_IKCONFIG_PROC: the running kernel's own build configuration
BOOT_CONFIG = "/boot/config-{release}"  # what distributions install beside the kernel image

DEBIAN_CONFIG = "/etc/default/kdump-tools"  # kdump-tools
RHEL_CONFIG = "/etc/kdump.conf"  # kexec-tools (RHEL <= 9) / kdump-utils (Fedora >= 40)
CONFIG = {"debian": DEBIAN_CONFIG, "rhel": RHEL_CONFIG}  # by DistroFamily value
DEBIAN_UNIT = "kdump-tools.service"
RHEL_UNIT = "kdump.service"

GRUB_DEFAULT = "/etc/default/grub"
GRUB_D = "/etc/default/grub.d"
DEBIAN_GRUB_SNIPPET = "/etc/default/grub.d/kdump-tools.cfg"  # installed by kdump-tools with the distro default
KFORENSIC_GRUB_SNIPPET = "/etc/default/grub.d/zz-kforensic-kdump.cfg"  # ours; sourced after kdump-tools.cfg
BLS_ENTRIES = "/boot/loader/entries"
#: What grub-mkconfig writes from /etc/default/grub(.d): what GRUB boots (Debian's update-grub writes the first).
GRUB_CFG = ("/boot/grub/grub.cfg", "/boot/grub2/grub.cfg")
GRUBENV = "/boot/grub2/grubenv"  # RHEL 8 BLS entries take their options from its kernelopts=
KERNEL_CMDLINE = "/etc/kernel/cmdline"
#: Where systemd-boot reads BLS entries when the ESP is not mounted at /boot ($ESP/loader/entries; bootctl list).
ESP_ENTRIES = ("/efi/loader/entries", "/boot/efi/loader/entries")
#: Where a UEFI GRUB of RHEL 7 / Fedora < 34 reads its grub.cfg (EFI/<vendor>/grub.cfg on the ESP); since, a stub there
#: only loads /boot/grub2/grub.cfg.
ESP_EFI = "/boot/efi/EFI"
#: Made by the kernel on a UEFI boot only: whether the ESP's grub.cfg is what GRUB read.
EFI_FIRMWARE = "/sys/firmware/efi"
SYSCTL_SNIPPET = "/etc/sysctl.d/90-kforensic-kdump.conf"
SYSRQ_TRIGGER = "/proc/sysrq-trigger"
#: Where systemd-sysctl (at boot) and ``sysctl --system`` read *.conf files: a name in an earlier directory masks
#: the same name in the later ones; the files are applied in the lexical order of their names, the last value of a
#: setting winning (sysctl.d(5)).
SYSCTL_DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d")
#: Applied after every sysctl.d file by procps' ``sysctl --system``; by systemd-sysctl only through a link in
#: sysctl.d (Debian's and RHEL's /etc/sysctl.d/99-sysctl.conf).
SYSCTL_CONF = "/etc/sysctl.conf"

BIN_DIRS = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
#: Looked up in BIN_DIRS.  grub2-mkconfig is RHEL/Fedora/SUSE's name of grub-mkconfig (Arch, Gentoo, Debian's too).
TOOLS = (
    "kdump-config",
    "kdumpctl",
    "makedumpfile",
    "kexec",
    "grubby",
    "update-grub",
    "grub2-mkconfig",
    "grub-mkconfig",
)
#: Exists only while systemd runs as PID 1 (sd_booted(3)): the live system's test.
SYSTEMD_RUNNING = "/run/systemd/system"
#: A tree's (--root) test: systemd installed, or running when the tree was taken.
SYSTEMD_MARKERS = ("/usr/lib/systemd/systemd", "/lib/systemd/systemd", SYSTEMD_RUNNING)
SYSTEMD_UNIT_DIR = "/etc/systemd/system"
#: Where packages install unit files: a native unit there makes systemd-sysv-generator ignore the SysV script of the
#: same name, its rc?.d links with it.
SYSTEMD_UNIT_FILE_DIRS = ("/usr/lib/systemd/system", "/lib/systemd/system")
#: The kdump init scripts a system without systemd starts (kdump-tools on Debian, kdump on RHEL 6), and the runlevels
#: whose /etc/rcN.d/S* links sysv-rc runs at boot (their LSB Default-Start: 2 3 4 5).
INIT_SCRIPTS = ("/etc/init.d/kdump-tools", "/etc/init.d/kdump")
SYSV_RUNLEVELS = ("2", "3", "4", "5")
DEBUGINFOD_DIR = "/etc/debuginfod"
DEFAULT_DUMP_DIR = "/var/crash"
#: The private key an SSH dump logs in with when the configuration names none: kdump-config's
#: ``SSH_KEY:=/root/.ssh/kdump_id_rsa`` (kdump-tools 1.8.1) and kdumpctl's ``SSH_KEY_LOCATION`` alike.
SSH_KEY_DEFAULT = "/root/.ssh/kdump_id_rsa"
#: The configuration key naming it, by the config file's family: kdump-tools' shell variable, kdump.conf's option.
SSH_KEY_OPTION = {"debian": "SSH_KEY", "rhel": "sshkey"}
#: sos report's df output (``df -al -x autofs``, 1K blocks; ``df -al`` before sos 3.2) at the top of the copy: the
#: inspected machine's free space when the report was made, the only one a --root copy can give.
SOS_DF = ("/sos_commands/filesys/df_-al_-x_autofs", "/sos_commands/filesys/df_-al")
#: The top directories of an installed system: absent from a --root tree that is a partial copy (of /proc and /sys,
#: of a few files), what lives under them was not examined, which is not "missing".
SYSTEM_DIRS = ("/usr", "/etc")
#: The program directories every installed system has (/bin and /sbin are links to them on a merged /usr; Arch's
#: /usr/sbin is a link to bin): a --root tree with /usr and without one of them is a partial copy (a sos report keeps
#: no program), so a program not found there is not known to be missing.
PROGRAM_DIRS = ("/usr/sbin", "/usr/bin")
#: Every top directory a kdump check reads under a --root: a tree with none of them has nothing to check (an empty
#: directory, a mistyped --root), and a 19-line report of unknowns with a crashkernel size from nothing said so badly.
CHECKED_DIRS = ("/etc", "/usr", "/boot", "/proc", "/sys", "/var")
PROC_VERSION = "/proc/version"
#: Kernel logs a root tree may hold, this boot's alone first (Debian's and RHEL 7's /var/log/dmesg); the live system's
#: ring buffer (/dev/kmsg) is read before them.
KMSG = "/dev/kmsg"
KERNEL_LOGS = ("/var/log/dmesg", "/var/log/kern.log", "/var/log/messages", "/var/log/syslog")
DPKG_STATUS = "/var/lib/dpkg/status"
RPM_DB = "/var/lib/rpm/rpmdb.sqlite"  # rpm >= 4.16 (RHEL 9, Fedora 33+)

#: Files the setup plan may create or change.
MANAGED_FILES = (
    DEBIAN_CONFIG,
    RHEL_CONFIG,
    DEBIAN_GRUB_SNIPPET,
    KFORENSIC_GRUB_SNIPPET,
    SYSCTL_SNIPPET,
)

#: The panic-related sysctls the checklist reads, as (dotted name, /proc/sys path).
PANIC_SYSCTLS = (
    ("kernel.panic_on_oops", "/proc/sys/kernel/panic_on_oops"),
    ("kernel.panic_on_warn", "/proc/sys/kernel/panic_on_warn"),
    ("kernel.hung_task_panic", "/proc/sys/kernel/hung_task_panic"),
    ("kernel.softlockup_panic", "/proc/sys/kernel/softlockup_panic"),
    ("kernel.hardlockup_panic", "/proc/sys/kernel/hardlockup_panic"),
    ("kernel.panic_on_rcu_stall", "/proc/sys/kernel/panic_on_rcu_stall"),
    ("kernel.panic", "/proc/sys/kernel/panic"),
    ("kernel.sysrq", "/proc/sys/kernel/sysrq"),
)
