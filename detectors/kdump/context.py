"""What several checklist rules and the setup plan need to know: the tooling family, its config, the collector."""

from __future__ import annotations

from dataclasses import dataclass

from detectors.kdump.crashkernel import (
    DISTRO_DEFAULTS,
    crashkernel_problem,
    crashkernel_unknown,
    distro_default,
    estimate_crashkernel,
)
from detectors.kdump.makedumpfile import CollectorOptions, parse_collector
from forensics.model import NotAvailable
from forensics.types import kdump_paths as paths
from forensics.types.kdump import (
    BootEntry,
    DistroFamily,
    Estimate,
    KdumpConfig,
    KdumpState,
    ReadProblem,
    TextFile,
    crashkernel_word,
)

#: Debian's kdump-config and RHEL's kdumpctl defaults when the config sets no collector.
DEFAULT_COLLECTOR = {
    DistroFamily.DEBIAN: "makedumpfile -c -d 31",
    DistroFamily.RHEL: "makedumpfile -l --message-level 7 -d 31",
    DistroFamily.UNKNOWN: "makedumpfile -c -d 31",
}


def tooling_family(state: KdumpState) -> DistroFamily:
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
    family = tooling_family(state)
    config: KdumpConfig | NotAvailable = NotAvailable("no kdump configuration file was found")
    if family is DistroFamily.DEBIAN:
        config = state.debian_config
    if family is DistroFamily.RHEL:
        config = state.rhel_config
    unexamined = state.not_examined(paths.DEBIAN_CONFIG)  # both files are under /etc
    what = "the kdump configuration" if family is DistroFamily.UNKNOWN else paths.CONFIG[family.value]
    if isinstance(config, NotAvailable) and unexamined:
        return NotAvailable(f"{what}: {unexamined}")
    partial = state.partial()
    if isinstance(config, NotAvailable) and partial and not config.reason.startswith("cannot read"):
        # Not found in a partial copy (no /usr/sbin: a sos report): not copied, or not there; unknown which.
        return NotAvailable(f"{what}: not found, and {partial.removeprefix('not examined: ')}")
    return config


def config_problem(state: KdumpState) -> ReadProblem | None:
    """Why the configuration the tooling reads exists but could not be read (None when read, or absent)."""
    family = tooling_family(state)
    path = paths.RHEL_CONFIG if family is DistroFamily.RHEL else paths.DEBIAN_CONFIG
    if family is DistroFamily.UNKNOWN or not isinstance(active_config(state), NotAvailable):
        return None
    return next((p for p in state.problems if p.path == path), None)


def collector_options(state: KdumpState) -> tuple[CollectorOptions, TextFile | None, int]:
    """The effective core collector, the file and line that set it (None, 0 for the default)."""
    family = tooling_family(state)
    config = active_config(state)
    if isinstance(config, KdumpConfig):
        entry = config.get("MAKEDUMP_ARGS" if family is DistroFamily.DEBIAN else "core_collector")
        if entry is not None:
            return parse_collector(entry.value), config.file, entry.line
    return parse_collector(DEFAULT_COLLECTOR[family]), None, 0


def crashkernel_estimate(state: KdumpState) -> Estimate:
    """The recommended reservation for this system."""
    images = state.images
    # A derivative (Linux Mint, Rocky) gets the default of the distribution it is like.
    known = {i for row in DISTRO_DEFAULTS for i in row.distro_ids}
    distro_id = next((i for i in (state.distro.id, *state.distro.like) if i in known), state.distro.id)
    default = distro_default(distro_id, state.arch)
    return estimate_crashkernel(
        state.system_ram_bytes, images.kernel_bytes, images.initrd_bytes, images.modules_bytes, default, release(state)
    )


def cmdline_crashkernel(state: KdumpState) -> str | None:
    """The crashkernel= value the running kernel uses: the last one, a ",low" companion aside."""
    if not isinstance(state.cmdline, TextFile):
        return None
    return crashkernel_word(state.cmdline.first_line().split())


#: Where a kernel command line is kept when no boot loader configuration on the machine holds it.
NO_BOOT_LOADER = (
    "no boot loader configuration here for kdump setup to edit (/etc/default/grub, grub.d, BLS entries, "
    "/etc/kernel/cmdline): the kernel command line is set where the machine is booted from (a VMM's direct kernel "
    "boot, firmware, a network boot)"
)


def no_boot_loader(state: KdumpState) -> bool:
    """No boot loader configuration was found where one was looked for: nothing on the machine sets crashkernel=
    (an unexamined tree is not this: its configuration was not seen)."""
    return not state.boot.files and not state.not_examined(paths.GRUB_DEFAULT)


@dataclass(frozen=True)
class BootGap:
    """The boot configuration's crashkernel= against the generated entry the boot loader boots."""

    source: tuple[TextFile, int, str]  # the file, 1-based line and value of the crashkernel= that takes effect
    entry: BootEntry | NotAvailable  # what the boot loader boots, or why it was not read
    values: frozenset[str]  # every crashkernel= value the boot configuration sets (any may end up last)
    ram: int | NotAvailable  # the machine's RAM, which a range expression is judged against
    release: str  # the running kernel's release ("" when unknown): crashkernel=auto depends on it
    arch: str | NotAvailable  # and on its architecture (auto's RAM threshold)

    @property
    def stale(self) -> bool:
        """The generated entry was read and lacks the configured crashkernel= (it has none, another, or one that
        reserves nothing, such as the auto an override replaces): it was not regenerated since."""
        if not isinstance(self.entry, BootEntry):
            return False
        value = self.entry.crashkernel
        return (
            value not in self.values or crashkernel_problem(value or "", self.ram, self.release, self.arch) is not None
        )

    @property
    def booted(self) -> str | None:
        """The crashkernel= value the next boot uses when it reserves memory, None when not known to."""
        if not isinstance(self.entry, BootEntry) or self.stale:
            return None
        return self.entry.crashkernel


def boot_gap(state: KdumpState) -> BootGap | None:
    """The configured crashkernel= and the generated entry; None when the boot configuration sets none, or one that
    reserves nothing here (its own line fails, and setup replaces it: whether it reached grub.cfg is moot)."""
    if not state.boot.crashkernel or value_problem(state, state.boot.crashkernel[-1][2]):
        return None
    values = frozenset(value for _, _, value in state.boot.crashkernel)
    return BootGap(
        state.boot.crashkernel[-1], state.boot.generated, values, state.system_ram_bytes, release(state), state.arch
    )


def release(state: KdumpState) -> str:
    """The running kernel's release, "" when it was not read."""
    return state.osrelease.first_line() if isinstance(state.osrelease, TextFile) else ""


def value_problem(state: KdumpState, value: str) -> str | None:
    """Why ``value`` of crashkernel= reserves nothing on this machine and its kernel (None when it reserves)."""
    return crashkernel_problem(value, state.system_ram_bytes, release(state), state.arch, state.system_ram_source)


def value_unknown(state: KdumpState, value: str) -> str | None:
    """Why it cannot be told whether ``value`` of crashkernel= reserves memory here (crashkernel=auto on a kernel
    not known to size it, or RAM at its uncertain threshold); None when it can."""
    return crashkernel_unknown(value, state.system_ram_bytes, release(state), state.arch, state.system_ram_source)


def reserved_now(state: KdumpState) -> int | None:
    """The bytes this boot reserved (/sys/kernel/kexec_crash_size), None when it was not read."""
    text = state.crash_size.first_line() if isinstance(state.crash_size, TextFile) else ""
    return int(text) if text.isdigit() else None


def bls_boot(state: KdumpState) -> bool:
    """The boot loader boots BLS entries, which grubby edits (RHEL's default when the entry was not read)."""
    entry = state.boot.generated
    return entry.bls if isinstance(entry, BootEntry) else state.distro.family is DistroFamily.RHEL


def regenerate_step(state: KdumpState, value: str) -> tuple[tuple[str, ...] | None, str]:
    """How the boot configuration's crashkernel= reaches what the boot loader boots: the command (None when it must
    stay a step by hand) and its text.

    GRUB boots grub.cfg, which only grub-mkconfig writes from /etc/default/grub(.d): Debian's update-grub, elsewhere
    ``grub2-mkconfig`` (RHEL, Fedora, SUSE) or ``grub-mkconfig`` (Arch) ``-o`` the grub.cfg that was read.  It stays by
    hand where its program is not under the root, where no grub.cfg was read (which file to write is not known), or
    where the ESP holds a grub.cfg with entries of its own (a UEFI boot of RHEL 7 or Fedora < 34 reads that one: which
    of the two boots is not known here).  BLS entries are edited in place by grubby.
    """
    entry = state.boot.generated
    source = state.boot.crashkernel[-1][0].path if state.boot.crashkernel else ""
    grub_cfg = isinstance(entry, BootEntry) and not entry.bls
    if source == paths.KERNEL_CMDLINE and not grub_cfg and state.distro.family is not DistroFamily.RHEL:
        # /etc/kernel/cmdline is read by kernel-install alone (systemd-boot, UKIs): it rewrites the kernel's entry.
        rel = release(state) or "$(uname -r)"
        return None, f"kernel-install add {rel} /boot/vmlinuz-{rel}"
    if bls_boot(state):
        argv = ("grubby", "--update-kernel=ALL", f"--args=crashkernel={value}")
        return (argv if state.tooling.grubby else None), " ".join(argv)
    family = state.distro.family
    if family is DistroFamily.DEBIAN or (family is DistroFamily.UNKNOWN and state.tooling.update_grub):
        return (("update-grub",) if state.tooling.update_grub else None), (
            f"update-grub (grub-mkconfig -o {paths.GRUB_CFG[0]})"
        )
    read = entry.file.path if isinstance(entry, BootEntry) else None
    program = state.tooling.grub_mkconfig
    name = (
        program.rsplit("/", 1)[-1]
        if program
        else ("grub2-mkconfig" if family is DistroFamily.RHEL else "grub-mkconfig")
    )
    target = read or (paths.GRUB_CFG[1] if name == "grub2-mkconfig" else paths.GRUB_CFG[0])
    argv = (name, "-o", target)
    text = " ".join(argv)
    esp = state.boot.esp_grub_cfg
    if esp:
        text += (
            f" (or -o {esp[0]}: a UEFI boot reads that one, which has entries of its own; whether this machine boots "
            f"by UEFI is not known here, the tree has no {paths.EFI_FIRMWARE.rsplit('/', 1)[0]}: "
            f"{paths.EFI_FIRMWARE} exists on one that does)"
        )
    return (argv if program and read and not esp else None), text


def regenerated_file(argv: tuple[str, ...]) -> str | None:
    """The grub.cfg a regeneration command of :func:`regenerate_step` rewrites (None for grubby, which edits BLS
    entries in place)."""
    if argv[:1] == ("update-grub",):
        return paths.GRUB_CFG[0]
    return argv[2] if len(argv) == 3 and argv[1] == "-o" else None
