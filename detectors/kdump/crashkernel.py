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

    def size_for(self, ram: int) -> int:
        """Bytes reserved on a machine with ``ram`` bytes (0 when no range matches)."""
        if self.fixed is not None:
            return self.fixed
        for item in self.ranges:
            if ram >= item.start and (item.end is None or ram < item.end):
                return item.size
        return 0


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
    return Crashkernel(text, None, tuple(ranges), offset or None, placement)


#: Kernels that size crashkernel=auto themselves: Red Hat's own RHEL 7 and 8 kernels, of the 3.10.0 and 4.18.0
#: series ("kdump: add support for crashkernel=auto", never upstream).  The dist tag alone is not the kernel: ELRepo's
#: kernel-ml/kernel-lt (6.6.8-1.el8.elrepo) and other mainline rebuilds carry .el8 and ignore auto; RHEL 9 kernels
#: (5.14.0-*.el9) dropped it for kdumpctl's reset-crashkernel.
_AUTO_KERNELS = re.compile(r"^(?:3\.10\.0-\S*\.el7|4\.18\.0-\S*\.el8)")


def auto_sized(value: str, release: str) -> bool:
    """``crashkernel=auto`` on a kernel that sizes it itself (a RHEL 7/8 release such as 4.18.0-513.el8_9.x86_64)."""
    return value == "auto" and _AUTO_KERNELS.match(release) is not None


def _auto_problem(release: str) -> str:
    """Why crashkernel=auto reserves nothing on the kernel of ``release`` ("" when it is not known)."""
    base = "crashkernel=auto is a RHEL 7/8 kernel extension; upstream and RHEL 9 kernels reserve nothing"
    if not release:
        return f"{base} (the running kernel's release was not read)"
    if re.search(r"\.el[78]", release):
        return f"{base}: {release} carries an EL 7/8 tag but is not Red Hat's 3.10.0/4.18.0 kernel (a mainline rebuild)"
    return base


#: The RAM below which Red Hat's crashkernel=auto reserves nothing by design: the RHEL 7 Kernel Crash Dump Guide's
#: "minimum threshold for automatic memory reservation" (2 GB on x86_64, ppc64, aarch64; 4 GB on s390x); RHEL 8's
#: kernel lowered x86_64's to 1 GB (its auto ranges start at 1G).
_AUTO_THRESHOLD = {"el7": {"s390x": 4 * GIB}, "el8": {"s390x": 4 * GIB, "x86_64": GIB}}


def _auto_threshold(release: str, arch: str | NotAvailable) -> int:
    table = _AUTO_THRESHOLD["el7" if release.startswith("3.10.0-") else "el8"]
    return table.get(arch if isinstance(arch, str) else "x86_64", 2 * GIB)


def crashkernel_problem(
    value: str, ram: int | NotAvailable, release: str = "", arch: str | NotAvailable = "x86_64"
) -> str | None:
    """Why a crashkernel= value reserves nothing on this machine (malformed, ``auto`` on a kernel that ignores it or
    below its RAM threshold, no range for its RAM); None when it reserves memory (or may: the RAM is not known).  The
    one rule for the command line and the boot configuration alike; ``release`` is the running kernel's."""
    if auto_sized(value, release):
        threshold = _auto_threshold(release, arch)
        if isinstance(ram, int) and ram < threshold:
            return (
                f"crashkernel=auto on this RHEL {'7' if release.startswith('3.10.0-') else '8'} kernel reserves "
                f"nothing below {threshold // GIB} GiB of RAM, and this machine has {ram // MIB} MiB"
            )
        return None
    if value.strip() == "auto":
        return _auto_problem(release)
    try:
        parsed = parse_crashkernel(value)
    except ValueError as exc:
        return str(exc)
    if isinstance(ram, int) and parsed.size_for(ram) == 0:
        return f"no range covers this machine's {ram // MIB} MiB of RAM"
    return None


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
) -> Estimate:
    """kdumpctl-style estimate: kernel + initramfs + modules + run time, the distro default as the floor."""
    parts = (kernel, initrd, modules)
    estimated = RUNTIME_BYTES + sum(p for p in parts if isinstance(p, int))
    floor = parse_crashkernel(default.crashkernel).size_for(ram) if isinstance(ram, int) else 0
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
    )
