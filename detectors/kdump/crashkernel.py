"""The ``crashkernel=`` parameter: parsing it, the size it reserves, the distro defaults, the estimate.

The recommended size follows the method of kdumpctl's ``estimate``: the crash
kernel needs room for its kernel image, its initramfs, the modules it loads
and about 64 MiB of run-time allocations; the distribution's default for the
machine's memory size is the floor.  Pure functions over plain data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from forensics.model import NotAvailable
from forensics.types.kdump import Estimate

MIB = 1 << 20
GIB = 1 << 30
RUNTIME_BYTES = 64 * MIB  # user space of the crash initramfs plus kernel allocations at run time
_ALIGN = 16 * MIB  # x86 CRASH_ALIGN: reservations are placed on 16 MiB boundaries
_ROUNDUP = 128 * MIB  # what parse_crashkernel_mem rounds the RAM up to, where it does (ram_rounding)


def _round_up(ram: int) -> int:
    """``ram`` rounded up to :data:`_ROUNDUP`, as parse_crashkernel_mem does from 6.0."""
    return -(-ram // _ROUNDUP) * _ROUNDUP


_UNITS = {"": 1, "K": 1 << 10, "M": MIB, "G": GIB, "T": 1 << 40, "P": 1 << 50, "E": 1 << 60}
_SIZE = re.compile(r"^(\d+)([KMGTPE]?)$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes of a kernel memory size like ``128M`` or ``4G``; ValueError when malformed."""
    match = _SIZE.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a size such as 256M or 1G")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


@dataclass(frozen=True)
class MemoryRange:
    """``start-end:size``: reserve ``size`` when RAM is in ``[start, end)`` (end None: no upper bound)."""

    start: int
    end: int | None
    size: int


@dataclass(frozen=True)
class Crashkernel:
    """A parsed ``crashkernel=`` value (see Documentation/admin-guide/kdump/kdump.rst)."""

    text: str
    fixed: int | None  # crashkernel=256M
    ranges: tuple[MemoryRange, ...]  # crashkernel=1G-4G:192M,4G-:256M
    offset: str | None  # @16M
    placement: str | None  # ",high" or ",low"
    parts: tuple[str, ...] = ()  # the ranges as written ("1G-4G:192M"), in the order of ``ranges``

    def size_for(self, ram: int, *, rounded: bool = False) -> int:
        """Bytes reserved on a machine with ``ram`` bytes (0 when no range matches, or the kernel rejects the value:
        :meth:`rejected`); ``rounded``: the ranges are matched with the RAM rounded up to 128 MiB, as kernels from
        6.0 do (see :func:`ram_rounding`)."""
        if self.fixed is not None:
            return self.fixed
        item, rejected = self._walk(ram, rounded)
        return 0 if rejected or item is None else item.size

    def rejected(self, ram: int, *, rounded: bool = False) -> MemoryRange | None:
        """The range whose size is not below the RAM, which makes the kernel reject the whole value ("crashkernel:
        invalid size", parse_crashkernel_mem) when it reads that range before one that matches; None when none."""
        item, rejected = self._walk(ram, rounded)
        return item if rejected else None

    def _walk(self, ram: int, rounded: bool) -> tuple[MemoryRange | None, bool]:
        """The ranges read in order as parse_crashkernel_mem reads them: (the range it stops at, whether that range
        rejects the value because its size is not below the RAM); (None, False) where no range matches."""
        total = _round_up(ram) if rounded else ram
        for item in self.ranges:
            if item.size >= total:
                return item, True
            if total >= item.start and (item.end is None or total < item.end):
                return item, False
        return None, False


def parse_crashkernel(text: str) -> Crashkernel:
    """Parse a ``crashkernel=`` value; ValueError names what is wrong.

    ``auto`` is rejected: it was a RHEL 7/8 kernel extension, never upstream, and RHEL 9 kernels dropped it.
    """
    value = text.strip()
    placement = None
    for suffix in (",high", ",low"):
        if value.endswith(suffix):
            value, placement = value[: -len(suffix)], suffix[1:]
    value, _, offset = value.partition("@")
    if value == "auto":
        raise ValueError("crashkernel=auto is a RHEL 7/8 kernel extension; upstream and RHEL 9 kernels reserve nothing")
    if ":" not in value:
        return Crashkernel(text, parse_size(value), (), offset or None, placement)
    ranges = []
    for part in value.split(","):
        span, sep, size = part.partition(":")
        start, dash, end = span.partition("-")
        if not sep or not dash:
            raise ValueError(f"range {part!r} is not start-[end]:size")
        low, high = parse_size(start), parse_size(end) if end else None
        if high is not None and high <= low:
            raise ValueError(f"range {part!r} ends before it starts")
        ranges.append(MemoryRange(low, high, parse_size(size)))
    return Crashkernel(text, None, tuple(ranges), offset or None, placement, tuple(value.split(",")))


#: Kernels from 6.0 round the RAM up to 128 MiB before matching crashkernel=start-end:size ranges and before
#: rejecting a size not below it: "kdump: round up the total memory size to 128M for crashkernel reservation" (Tao
#: Liu, credit Dave Young; posted for v5.19-rc2, June 2022).  It went to Andrew Morton's mm-nonmm-unstable (in
#: linux-next from 2022-07-04, by kernel.org's post-receive logs), not to a 5.19 fix, so it was merged in the 6.0
#: merge window; 6.1's kernel/crash_core.c parse_crashkernel_mem has it (kernel/crash_reserve.c from 6.9).  Its
#: case: a 1 GiB KVM guest has 1023 MiB of System RAM (firmware keeps some), and crashkernel=1G-2G:128M reserved
#: nothing before it, 128 MiB after.  kdump-utils' get_system_size rounds the same way (rhkdump/kdump-utils #76).
_ROUNDING_SINCE = (6, 0)
_VERSION = re.compile(r"^(\d+)\.(\d+)")
#: Kernels older than 6.0 that carry the rounding, or may: Red Hat's and Fedora's.  RHEL 9's from 5.14.0-133.el9 (its
#: changelog lists the patch for that build: ALT Linux's kernel-image-centos 5.14.0.133-alt1.el9, "Updated to
#: kernel-5.14.0-133.el9"); Fedora's 5.8-5.10 kernels (branches rebased on those stable releases carry it after
#: "kdump: add support for crashkernel=auto", by kernel.org's post-receive logs); RHEL 7/8's crashkernel=auto code
#: rounds (see _AUTO_THRESHOLD), whether for every value and build is not known here.  (Oracle's UEK, .elNuek, took
#: RHEL's auto.)  Other distributions' kernels older than 6.0 (Debian, Ubuntu, SUSE) are taken to match as read.
_BACKPORTS = re.compile(r"\.(?:el\d+|fc\d+)")
_RHEL9 = re.compile(r"^5\.14\.0-(\d+)\S*\.el9")
_RHEL9_ROUNDING = 133


def ram_rounding(release: str) -> bool | NotAvailable:
    """Whether the kernel of ``release`` matches crashkernel= ranges with the RAM rounded up to 128 MiB: True from
    6.0 (and RHEL 9 from 5.14.0-133.el9), False for an older kernel not known to carry it; not available (why) when
    the release was not read or is a Red Hat / Fedora kernel older than 6.0 that may carry the backport."""
    if not release:
        return NotAvailable("the running kernel's release was not read")
    rhel9 = _RHEL9.match(release)
    if rhel9 is not None and int(rhel9.group(1)) >= _RHEL9_ROUNDING:
        return True
    version = _VERSION.match(release)
    if version is None:
        return NotAvailable(f"the kernel release {release!r} is not a version kforensic can compare")
    if (int(version.group(1)), int(version.group(2))) >= _ROUNDING_SINCE:
        return True
    if _BACKPORTS.search(release):
        return NotAvailable(
            f"{release} is a Red Hat or Fedora kernel older than 6.0, which may carry the rounding as a backport"
        )
    return False


@dataclass(frozen=True)
class RangeMatch:
    """What a ``crashkernel=`` value reserves on a machine's RAM as its kernel matches the ranges: with the RAM as
    read and rounded up to 128 MiB, and whether the kernel rounds (not available: why)."""

    parsed: Crashkernel
    ram: int  # the RAM read
    plain: int  # bytes reserved matching the RAM as read
    rounded: int  # bytes reserved matching it rounded up to 128 MiB
    rounds: bool | NotAvailable

    @property
    def size(self) -> int | None:
        """Bytes the kernel reserves; None when that depends on whether it rounds, which is not known."""
        if self.rounds is True:
            return self.rounded
        if self.rounds is False or self.plain == self.rounded:
            return self.plain
        return None

    @property
    def reserves(self) -> bool | None:
        """Whether the kernel reserves anything; None when that is not known (rounded, it would; as read, not)."""
        if self.size is not None:
            return self.size > 0
        return None if (self.plain == 0) != (self.rounded == 0) else self.plain > 0

    @property
    def rejected(self) -> MemoryRange | None:
        """The range that makes the kernel reject the value (its size is not below the RAM), where it reserves
        nothing for that reason."""
        if self.reserves is not False:
            return None
        # As this kernel reads the RAM; where that is not known, only a range both readings reject.
        modes = (self.rounds,) if isinstance(self.rounds, bool) else (False, True)
        found = {self.parsed.rejected(self.ram, rounded=mode) for mode in modes}
        return found.pop() if len(found) == 1 else None

    @property
    def least(self) -> int:
        """The smaller of what it may reserve."""
        return self.size if self.size is not None else min(self.plain, self.rounded)

    def matched(self) -> str:
        """How the RAM was matched, for a line's detail: '' when rounding changes nothing here."""
        if self.plain == self.rounded:
            return ""
        up = _round_up(self.ram) // MIB
        if self.rounds is True:
            return f"matched as {up} MiB: kernels from 6.0 round the RAM up to 128 MiB"
        if self.rounds is False:
            return f"matched as read, not rounded up to {up} MiB as kernels from 6.0 do"
        return ""

    def unknown(self, value: str, source: str) -> str:
        """Why whether ``value`` reserves memory here is not known (for ``reserves`` None)."""
        up = _round_up(self.ram) // MIB
        why = self.rounds.reason if isinstance(self.rounds, NotAvailable) else ""
        return (
            f"whether crashkernel={value} reserves memory here is not known: this machine's {self.ram // MIB} MiB of "
            f"RAM{f' ({source})' if source else ''} is matched as {up} MiB by a kernel that rounds it up to 128 MiB "
            f"(mainline from 6.0), where {_mib(self.rounded)} is reserved, and as read by one that does not, where "
            f"{_mib(self.plain)} is; {why}"
        )


def _mib(size: int) -> str:
    return f"{size // MIB} MiB" if size else "nothing"


def match_ranges(parsed: Crashkernel, ram: int, release: str) -> RangeMatch:
    """What ``parsed`` reserves on ``ram`` bytes of RAM under the kernel of ``release``."""
    return RangeMatch(parsed, ram, parsed.size_for(ram), parsed.size_for(ram, rounded=True), ram_rounding(release))


#: Kernels that size crashkernel=auto themselves: Red Hat's own RHEL 7 and 8 kernels, of the 3.10.0 and 4.18.0
#: series ("kdump: add support for crashkernel=auto", never upstream).  The dist tag alone is not the kernel: ELRepo's
#: kernel-ml/kernel-lt (6.6.8-1.el8.elrepo) and other mainline rebuilds carry .el8 and ignore auto; RHEL 9 kernels
#: (5.14.0-*.el9) dropped it for kdumpctl's reset-crashkernel.
_AUTO_KERNELS = re.compile(r"^(?:3\.10\.0-\S*\.el7|4\.18\.0-\S*\.el8)")


def auto_sized(value: str, release: str) -> bool:
    """``crashkernel=auto`` on a kernel that sizes it itself (a RHEL 7/8 release such as 4.18.0-513.el8_9.x86_64)."""
    return value == "auto" and _AUTO_KERNELS.match(release) is not None


def _auto_problem(release: str) -> str:
    """Why crashkernel=auto reserves nothing on the kernel of ``release`` (a release that was read)."""
    base = "crashkernel=auto is a RHEL 7/8 kernel extension; upstream and RHEL 9 kernels reserve nothing"
    if re.search(r"\.el[78]", release):
        return f"{base}: {release} carries an EL 7/8 tag but is not Red Hat's 3.10.0/4.18.0 kernel (a mainline rebuild)"
    return base


#: What tells whether a kernel sizes crashkernel=auto: its release (Red Hat's 3.10.0-*.el7, 4.18.0-*.el8 do).
CHECK_AUTO = (
    "uname -r on the machine: a Red Hat 3.10.0-*.el7 or 4.18.0-*.el8 kernel sizes crashkernel=auto, other kernels "
    "reserve nothing for it (dmesg | grep -i crashkernel says what this boot reserved)"
)
#: Oracle's UEK kernels (4.14.35-*.el7uek, 5.4.17-*.el8uek) took crashkernel=auto from RHEL 7 with ranges of their own
#: (linux-uek5 "x86: add support for crashkernel=auto", Orabug 27234070), which are not held here.
_UEK = re.compile(r"\.el\d+uek")

#: The RAM from which crashkernel=auto reserves memory on Red Hat's kernels, by RHEL major and architecture, as
#: (the lowest it may be, the highest it may be): where the sources disagree, between the two the verdict is unknown.
#: RHEL 7: the Kernel Administration Guide's "Minimum Amount of Memory Required for Automatic Memory Reservation"
#: (table 7.2: 2 GB on x86_64, ppc64 and arm64, 4 GB on s390x).  RHEL 8: its "Managing, monitoring and updating the
#: kernel", "Configuring kdump memory usage" (x86_64 "more than 1GB", arm64 and IBM Power "more than 2GB").  The
#: kernel's own table (kernel/crash_core.c __parse_crashkernel), as posted to LKML from RHEL 8's "4.18.0-147.el8"
#: (2019-12-04) and from CentOS Stream 8 (the RFC of 2022-01-27, its kdump.rst "the threshold is 1G on x86_64 and
#: s390x, 2G on arm64, ppc64 and ppc64le"): x86_64 from 1G in both, arm64 and ppc64 from 2G, s390x from 4G in the
#: first and from 1G in the second; which RHEL 8 minor changed s390x's is not known here.  (ppc64 with fadump=on
#: starts at 4G in CentOS Stream 8's.)
_AUTO_THRESHOLD: dict[str, dict[str, tuple[int, int]]] = {
    "el7": {
        "x86_64": (2 * GIB, 2 * GIB),
        "ppc64": (2 * GIB, 2 * GIB),
        "ppc64le": (2 * GIB, 2 * GIB),
        "aarch64": (2 * GIB, 2 * GIB),
        "s390x": (4 * GIB, 4 * GIB),
    },
    "el8": {
        "x86_64": (GIB, GIB),
        "ppc64le": (2 * GIB, 2 * GIB),
        "aarch64": (2 * GIB, 2 * GIB),
        "s390x": (GIB, 4 * GIB),
    },
}
# The kernel may compare the RAM rounded up to 128 MiB (_ROUNDUP) with the ranges (parse_crashkernel_mem's "firmware
# sometimes reserves some memory regions for its own use" in the crashkernel=auto patch posted to LKML on 2019-12-04
# "as implemented in RH 4.18.0-147.el8 kernels"; whether every RHEL 7/8 kernel does is not known here): a machine up
# to that much below an auto threshold may still be at it, and the RAM read here (/proc/iomem's System RAM) is not
# the kernel's figure to the byte.


def _auto_threshold(release: str, arch: str | NotAvailable) -> tuple[int, int]:
    """The RAM threshold of crashkernel=auto on Red Hat's kernel ``release``: (lowest, highest) it may be; both
    bounds of the architectures when the architecture was not read or is not in the table."""
    table = _AUTO_THRESHOLD["el7" if release.startswith("3.10.0-") else "el8"]
    if isinstance(arch, str) and arch in table:
        return table[arch]
    return min(low for low, _ in table.values()), max(high for _, high in table.values())


def _rhel(release: str) -> str:
    return "7" if release.startswith("3.10.0-") else "8"


def crashkernel_unknown(
    value: str,
    ram: int | NotAvailable,
    release: str = "",
    arch: str | NotAvailable = "x86_64",
    ram_source: str = "",
) -> str | None:
    """Why it cannot be told whether a crashkernel= value reserves memory on this machine; None when it can.
    ``auto`` depends on the kernel: a release not read, a kernel whose auto table is not held here, or RAM too near
    Red Hat's threshold (uncertain, or within the kernel's rounding of it) leave it unknown.  A range expression
    does where the RAM rounded up to 128 MiB and as read fall in different ranges and whether this kernel rounds is
    not known (:func:`ram_rounding`); ``ram_source`` names the RAM figure read."""
    if value.strip() != "auto":
        return _ranges_unknown(value, ram, release, ram_source)
    if not release:
        return "whether this kernel sizes crashkernel=auto is not known: the running kernel's release was not read"
    if _UEK.search(release):
        return (
            f"{release} is an Oracle UEK kernel, which sizes crashkernel=auto by a RAM table of its own that "
            "kforensic does not hold"
        )
    if not auto_sized(value, release) or not isinstance(ram, int):
        return None
    low, high = _auto_threshold(release, arch)
    if ram + _ROUNDUP <= low or ram >= high:
        return None
    where = arch if isinstance(arch, str) else "an architecture not read"
    if low == high:
        at = f"{low // GIB} GiB"
        why = "the kernel rounds the RAM up to 128 MiB before comparing, and the RAM read here is not its figure"
    else:
        at = f"{low // GIB} GiB or {high // GIB} GiB"
        why = "the sources disagree for this architecture and kernel"
    return (
        f"whether crashkernel=auto reserves anything on this RHEL {_rhel(release)} kernel is not known: its RAM "
        f"threshold on {where} is {at} ({why}), and this machine has {ram // MIB} MiB"
    )


def crashkernel_problem(
    value: str,
    ram: int | NotAvailable,
    release: str = "",
    arch: str | NotAvailable = "x86_64",
    ram_source: str = "",
) -> str | None:
    """Why a crashkernel= value reserves nothing on this machine (malformed, ``auto`` on a kernel that ignores it or
    below its RAM threshold, no range for its RAM); None when it reserves memory, or may (the RAM is not known; see
    :func:`crashkernel_unknown` for ``auto``).  The one rule for the command line and the boot configuration alike;
    ``release`` is the running kernel's ("" when not read)."""
    # (auto only: a range value's unknown, match.reserves None, is read below, with its one parse and match)
    if value.strip() == "auto" and crashkernel_unknown(value, ram, release, arch, ram_source) is not None:
        return None
    if auto_sized(value, release):
        low, _ = _auto_threshold(release, arch)
        if isinstance(ram, int) and ram + _ROUNDUP <= low:
            return (
                f"crashkernel=auto on this RHEL {_rhel(release)} kernel reserves "
                f"nothing below {low // GIB} GiB of RAM, and this machine has {ram // MIB} MiB"
            )
        return None
    if value.strip() == "auto":
        return _auto_problem(release)
    try:
        parsed = parse_crashkernel(value)
    except ValueError as exc:
        return str(exc)
    if isinstance(ram, int):
        match = match_ranges(parsed, ram, release)
        if match.reserves is False:
            # Where rounding decides, the RAM figure read is named (iomem's is close to the kernel's, MemTotal not).
            how = "; ".join(filter(None, (ram_source, match.matched()))) if match.plain != match.rounded else ""
            rejected = match.rejected
            if rejected is not None:
                written = parsed.parts[parsed.ranges.index(rejected)]
                return (
                    f"its range {written}'s size is not below this machine's {ram // MIB} MiB of RAM"
                    f"{f' ({how})' if how else ''}: the kernel, reading the ranges in order, rejects the value there "
                    '("crashkernel: invalid size")'
                )
            return f"no range covers this machine's {ram // MIB} MiB of RAM{f' ({how})' if how else ''}"
    return None


def _ranges_unknown(value: str, ram: int | NotAvailable, release: str, ram_source: str) -> str | None:
    """Why whether a range expression reserves memory here is not known (the kernel's rounding), None when it is."""
    try:
        parsed = parse_crashkernel(value)
    except ValueError:
        return None
    if not isinstance(ram, int):
        return None
    match = match_ranges(parsed, ram, release)
    return match.unknown(value, ram_source) if match.reserves is None else None


@dataclass(frozen=True)
class DistroDefault:
    """One row of the distro default table."""

    distro_ids: tuple[str, ...]  # os-release ID values; () matches any
    arches: tuple[str, ...]  # uname -m values; () matches any
    crashkernel: str
    source: str  # where the value comes from


#: Distribution defaults, first match wins (values as the packages ship them, 2024-2025).
DISTRO_DEFAULTS = (
    DistroDefault(
        ("ubuntu",), (), "2G-4G:320M,4G-32G:512M,32G-64G:1024M,64G-128G:2048M,128G-:4096M", "Ubuntu kdump-tools"
    ),
    DistroDefault(("debian",), (), "384M-:128M", "Debian kdump-tools (grub.d/kdump-tools.cfg)"),
    DistroDefault(("fedora",), ("x86_64", "s390x"), "2G-64G:256M,64G-:512M", "Fedora kdump-utils"),
    DistroDefault(("fedora",), ("aarch64",), "2G-4G:256M,4G-64G:320M,64G-:576M", "Fedora kdump-utils"),
    DistroDefault((), ("aarch64",), "1G-4G:256M,4G-64G:320M,64G-:576M", "RHEL 9 kexec-tools"),
    DistroDefault((), ("ppc64le",), "2G-4G:384M,4G-16G:512M,16G-64G:1G,64G-128G:2G,128G-:4G", "RHEL 9 kexec-tools"),
    DistroDefault(
        ("rhel", "centos", "rocky", "almalinux", "ol"), (), "1G-4G:192M,4G-64G:256M,64G-:512M", "RHEL 9 kexec-tools"
    ),
    DistroDefault((), (), "1G-4G:192M,4G-64G:256M,64G-:512M", "generic default (RHEL 9 values)"),
)


def distro_default(distro_id: str, arch: str | NotAvailable) -> DistroDefault:
    """The default crashkernel= of a distribution on an architecture (x86_64 when unknown)."""
    machine = arch if isinstance(arch, str) else "x86_64"
    for row in DISTRO_DEFAULTS:
        if (not row.distro_ids or distro_id in row.distro_ids) and (not row.arches or machine in row.arches):
            return row
    return DISTRO_DEFAULTS[-1]


def estimate_crashkernel(
    ram: int | NotAvailable,
    kernel: int | NotAvailable,
    initrd: int | NotAvailable,
    modules: int | NotAvailable,
    default: DistroDefault,
    release: str = "",
) -> Estimate:
    """kdumpctl-style estimate: kernel + initramfs + modules + run time, the distro default as the floor (what the
    kernel of ``release`` reserves for it; the least it may where that depends on its rounding of the RAM)."""
    parts = (kernel, initrd, modules)
    estimated = RUNTIME_BYTES + sum(p for p in parts if isinstance(p, int))
    floor = match_ranges(parse_crashkernel(default.crashkernel), ram, release).least if isinstance(ram, int) else 0
    best = max(estimated, floor)
    recommended = -(-best // _ALIGN) * _ALIGN
    return Estimate(
        kernel=kernel,
        initrd=initrd,
        modules=modules,
        runtime=RUNTIME_BYTES,
        estimated=estimated,
        floor=floor,
        floor_source=default.source,
        floor_crashkernel=default.crashkernel,
        recommended=recommended,
        complete=all(isinstance(p, int) for p in parts),
        grounded=isinstance(ram, int) or any(isinstance(p, int) for p in parts),
    )
