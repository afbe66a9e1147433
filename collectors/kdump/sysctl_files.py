"""The sysctl configuration applied at boot: every ``key = value`` line, in the order applied.

systemd-sysctl (at boot) and procps' ``sysctl --system`` read the *.conf files of paths.SYSCTL_DIRS: a name in an
earlier directory masks the same name in a later one (a link to /dev/null masks it entirely), and the files are
applied in the lexical order of their names, a later value of a setting winning (sysctl.d(5)).  ``sysctl --system``
then applies /etc/sysctl.conf, after them all; systemd-sysctl reads it only through a link in sysctl.d (Debian's and
RHEL's 99-sysctl.conf), which is read once here, as /etc/sysctl.conf, the later of its two places.
"""

from __future__ import annotations

from collectors.kdump.reader import RootReader
from forensics.model import NotAvailable
from forensics.types import kdump_paths as paths
from forensics.types.kdump import SysctlAssignment, TextFile


def _assignments(file: TextFile, *, last: bool = False) -> list[SysctlAssignment]:
    found = []
    for number, line in enumerate(file.lines, 1):
        text = line.strip()
        if not text or text[0] in "#;":
            continue
        key, sep, value = text.partition("=")
        if not sep:
            continue
        # "-key" only asks to ignore a failure to set it; "/" and "." are both separators (a "/" first swaps them).
        name = key.strip().lstrip("-").strip()
        if "/" in name.split(".", 1)[0]:
            name = name.translate(str.maketrans("/.", "./"))
        found.append(SysctlAssignment(name, value.strip(), file, number, last))
    return found


def boot_sysctls(reader: RootReader) -> tuple[SysctlAssignment, ...]:
    """Every assignment of the boot-time sysctl configuration under the root, in the order applied."""
    chosen: dict[str, str] = {}
    for directory in paths.SYSCTL_DIRS:
        for name in reader.listdir(directory):
            if name.endswith(".conf"):
                chosen.setdefault(name, f"{directory}/{name}")
    conf = reader.host_path(paths.SYSCTL_CONF)
    found: list[SysctlAssignment] = []
    for name in sorted(chosen):
        path = chosen[name]
        if reader.host_path(path) == conf:
            continue  # the link to /etc/sysctl.conf: read below, where sysctl --system applies it
        file = reader.read_text(path)
        # Absent: a link to /dev/null (masked) or a dangling one; unreadable: recorded among the read problems.
        if isinstance(file, TextFile):
            found += _assignments(file)
    last = reader.read_text(paths.SYSCTL_CONF)
    if not isinstance(last, NotAvailable):
        found += _assignments(last, last=True)
    return tuple(found)
