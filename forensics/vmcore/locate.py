"""Finding the dump and the kernel log beside it in the layouts kdump tools write.

- Debian/Ubuntu kdump-tools: ``/var/crash/<stamp>/dump.<stamp>`` and ``dmesg.<stamp>``
  (``/var/crash/<stamp>/`` may also hold a ``vmcore`` from older versions).
- RHEL/Fedora kexec-tools / kdump-utils: ``/var/crash/<host>-<date>/vmcore`` and
  ``vmcore-dmesg.txt`` (``vmcore.flat`` when the target is ssh).
- The project's fixtures: ``vmcore`` and ``dmesg.txt``.

Given ``/var/crash`` itself, the newest crash directory is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forensics.errors import InputError, UsageError

_DUMP_NAMES = ("vmcore", "vmcore.flat", "dump")
_DMESG_NAMES = ("vmcore-dmesg.txt", "dmesg.txt", "dmesg")


@dataclass(frozen=True)
class DumpLocation:
    """A dump and, when found, the kernel log saved beside it."""

    dump: Path
    dmesg: Path | None
    note: str | None = None  # how the dump was chosen among several, for the report


def _dumps_in(directory: Path) -> list[Path]:
    files = sorted(p for p in directory.iterdir() if p.is_file())
    named = [directory / name for name in _DUMP_NAMES if (directory / name).is_file()]
    stamped = [p for p in files if p.name.startswith("dump.") and not p.name.endswith((".tmp", ".incomplete"))]
    return named + stamped


def _dump_in(directory: Path) -> Path | None:
    """The one dump in ``directory``; asks (exit 2) when there are several rather than pick one silently."""
    found = _dumps_in(directory)
    if len(found) > 1:
        raise UsageError(
            f"{directory} holds {len(found)} dumps: " + ", ".join(p.name for p in found),
            hint=f"give the one to analyse, e.g. kforensic vmcore {found[0]}",
        )
    return found[0] if found else None


def _dmesg_beside(dump: Path) -> Path | None:
    """The kernel log a kdump tool would have written beside ``dump``, if any: found by its name only (whether it is
    the dump's log is read from the dump later, :mod:`forensics.vmcore.logcheck`).

    kdump-tools names the log by the dump's stamp: ``dump.<stamp>``'s is ``dmesg.<stamp>`` and no other
    ``dmesg.*`` (another crash's in the same directory); a ``vmcore`` in ``/var/crash/<stamp>/`` (older
    kdump-tools) takes ``dmesg.<stamp>`` of its directory's stamp, else the directory's one ``dmesg.*``.
    """
    directory = dump.parent
    stamp = dump.name.removeprefix("dump.") if dump.name.startswith("dump.") else directory.name
    stamped = directory / ("dmesg." + stamp)
    if dump.name.startswith("dump."):
        return stamped if stamped.is_file() else _named_dmesg(directory)
    named = _named_dmesg(directory)
    if named is not None:
        return named
    if stamped.is_file():
        return stamped
    others = [p for p in directory.glob("dmesg.*") if p.is_file()]
    return others[0] if len(others) == 1 else None


def _named_dmesg(directory: Path) -> Path | None:
    """The log of RHEL's and the fixtures' names (``vmcore-dmesg.txt``, ``dmesg.txt``, ``dmesg``)."""
    return next((directory / name for name in _DMESG_NAMES if (directory / name).is_file()), None)


def locate_dump(path: Path) -> DumpLocation:
    """Find the dump (and its dmesg) for a file or crash directory the user gave."""
    if not path.exists():
        raise InputError(
            f"{path}: no such file or directory", hint="give the dump file or its /var/crash/<stamp>/ directory"
        )
    if path.is_file():
        return DumpLocation(path, _dmesg_beside(path))
    note = None
    try:
        dump = _dump_in(path)
        if dump is None:
            crashes = sorted(
                (d for d in path.iterdir() if d.is_dir() and _dumps_in(d)), key=lambda d: d.stat().st_mtime
            )
            dump = _dump_in(crashes[-1]) if crashes else None
            if len(crashes) > 1:
                note = f"{path} holds {len(crashes)} crash directories: analysed the newest, {crashes[-1].name}"
    except OSError as exc:
        raise InputError(
            f"cannot read {path}: {exc.strerror or exc}", hint="check permissions (dumps are root-only)"
        ) from None
    if dump is None:
        raise InputError(
            f"{path}: no dump found (looked for vmcore, dump.<stamp>, vmcore.flat here and one level down)",
            hint="give the dump file itself",
        )
    return DumpLocation(dump, _dmesg_beside(dump), note)
