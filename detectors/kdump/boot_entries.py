"""Checklist rule of the boot entries the boot loader offers besides the default one.

The default entry decides the verdict (``crashkernel-generated``, ``crashkernel-cmdline``): it is what the next
boot boots.  The others are what ``grubby --info=ALL`` lists beside it (grub.cfg's menuentries, submenus' too; every
BLS entry): one booted instead, picked at the boot menu or made the default by a kernel update or ``grubby
--set-default``, reserves what its own command line says.  They are grouped by state, each cited by file and line,
at low (no memory reserved) or info (another size) severity.
"""

from __future__ import annotations

from collections.abc import Sequence

from detectors.kdump.context import boot_gap, regenerate_step, value_problem
from detectors.kdump.util import file_evidence, warn
from forensics.model import Evidence, Severity
from forensics.types.kdump import BootEntry, CheckLine, Estimate, KdumpState

_TITLE = "crashkernel= in the other boot entries"
_WHY_NONE = (
    "the boot loader offers this entry too: booted instead (picked at the boot menu, or made the default by a kernel "
    "update or grubby --set-default), it reserves no memory for the crash kernel, and a crash leaves no dump"
)
_WHY_OTHER = (
    "the boot loader offers this entry too: booted instead, it reserves another size than the default entry's, "
    "which the recommended size was judged against"
)
#: grub.d scripts whose entries boot other systems (os-prober's: another installation's command line is its own).
_FOREIGN = ("30_os-prober",)
#: grub.d scripts copied into grub.cfg as written by hand: grub-mkconfig does not give them the configuration's values.
_BY_HAND = ("40_custom", "41_custom")
#: How many entries a line names (the rest are counted): a machine keeps a few kernels, a grub.cfg two entries each.
_NAMED = 6


def _default_ok(state: KdumpState) -> BootEntry | None:
    """The default entry when it boots with a crashkernel= that reserves memory here and is what the boot
    configuration says (else its own lines say what is wrong, and the fix they give reaches every entry)."""
    entry = state.boot.generated
    if not isinstance(entry, BootEntry) or entry.crashkernel is None or value_problem(state, entry.crashkernel):
        return None
    gap = boot_gap(state)
    return None if gap is not None and gap.stale else entry


def _section(entry: BootEntry) -> str:
    return entry.section.rsplit("/", 1)[-1]


def _left_out(entry: BootEntry) -> bool:
    return entry.recovery or _section(entry) in _FOREIGN


def _others(state: KdumpState, default: BootEntry) -> tuple[list[BootEntry], list[BootEntry]]:
    """The entries other than the default: those judged, and those left out (recovery/rescue, other systems')."""
    others = [e for e in state.boot.entries if (e.file.path, e.line) != (default.file.path, default.line)]
    return [e for e in others if not _left_out(e)], [e for e in others if _left_out(e)]


def entries_step(state: KdumpState) -> str | None:
    """The crashkernel= value the regeneration step gives the other entries that lack one (check's
    ``crashkernel-entries:none``), None when none lacks it or every one that does was written by hand (grub.d's
    40_custom: the step would not reach it, and setup planning it would never converge)."""
    default = _default_ok(state)
    if default is None:
        return None
    judged, _ = _others(state, default)
    bare = [e for e in judged if not _reserves(state, e) and _section(e) not in _BY_HAND]
    return default.crashkernel if bare else None


def _reserves(state: KdumpState, entry: BootEntry) -> bool:
    return entry.crashkernel is not None and value_problem(state, entry.crashkernel) is None


def _entries(n: int) -> str:
    return f"{n} {'entry' if n == 1 else 'entries'}"


def _recovery_note(left_out: Sequence[BootEntry]) -> str:
    """What was left out and why: recovery/rescue entries, other systems' (os-prober)."""
    recovery = [e for e in left_out if e.recovery]
    foreign = [e for e in left_out if not e.recovery]
    note = ""
    if recovery:
        why = "booted to repair the system, not to run it"
        if not all(e.bls for e in recovery):
            why += "; grub-mkconfig gives them GRUB_CMDLINE_LINUX only"
        one = len(recovery) == 1
        note += f"; {len(recovery)} recovery or rescue {'entry' if one else 'entries'} left out ({why})"
    if foreign:
        note += f"; {_entries(len(foreign))} of other systems (os-prober) left out: their command line is theirs"
    return note


def others_note(state: KdumpState) -> str:
    """What the default entry's PASS adds of the other entries when all of them boot with its crashkernel= ("" when
    there are none, or some do not: their own lines say so)."""
    default = _default_ok(state)
    if default is None:
        return ""
    judged, recovery = _others(state, default)
    if any(e.crashkernel != default.crashkernel for e in judged) or not (judged or recovery):
        return ""
    one = len(judged) == 1
    same = (
        f"; so {'does' if one else 'do'} the {_entries(len(judged)).replace(' ', ' other ', 1)} the boot loader offers"
    )
    return (same if judged else "") + _recovery_note(recovery)


def _listing(entries: Sequence[BootEntry]) -> str:
    """``FILE line N (title), line M (title)``, one path per file, the first :data:`_NAMED` entries."""
    parts: list[str] = []
    last = ""
    for entry in entries[:_NAMED]:
        where = entry.where if entry.file.path != last else entry.where.removeprefix(f"{entry.file.path} ")
        last = entry.file.path
        said = entry.title or entry.kernel or "untitled"
        said += f": crashkernel={entry.crashkernel}" if entry.crashkernel else ": no crashkernel="
        parts.append(f"{where} ({said})")
    more = f" and {len(entries) - _NAMED} more" if len(entries) > _NAMED else ""
    return ", ".join(parts) + more


def _evidence(entries: Sequence[BootEntry]) -> tuple[Evidence, ...]:
    cited: tuple[Evidence, ...] = ()
    for entry in entries[:_NAMED]:
        has = f"crashkernel={entry.crashkernel}" if entry.crashkernel else None
        cited += file_evidence(entry.file, entry.line, None if entry.env else has)
        if entry.env is not None:
            cited += file_evidence(entry.env, entry.env_line, has)
    return cited


def check_boot_entries(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """The other entries of the boot loader, grouped: without a crashkernel= that reserves memory here (low), with
    another value than the default's (info).  No line while the default entry itself is not right."""
    default = _default_ok(state)
    if default is None:
        return []
    judged, recovery = _others(state, default)
    value = default.crashkernel or ""
    none = [e for e in judged if not _reserves(state, e)]
    other = [e for e in judged if _reserves(state, e) and e.crashkernel != value]
    step = regenerate_step(state, value)[1]
    fix = f"{step} (every entry gets crashkernel={value}), or remove the entries no longer booted"
    custom = sorted({e.section for e in none if _section(e) in _BY_HAND})
    if custom:
        # grub-mkconfig copies these as written: the value goes into the script itself.
        fix += f"; an entry written by hand is given crashkernel={value} in {' and '.join(custom)}, then {step}"
    note = _recovery_note(recovery)
    groups = (
        ("none", none, "without a crashkernel= that reserves memory here", _WHY_NONE, Severity.LOW),
        ("other", other, "with another crashkernel=", _WHY_OTHER, Severity.INFO),
    )
    lines = []
    for name, entries, how, why, severity in groups:
        if not entries:
            continue
        boot = "boots" if len(entries) == 1 else "boot"
        detail = (
            f"{_entries(len(entries))} besides the default ({default.where}, crashkernel={value}) {boot} {how}: "
            f"{_listing(entries)}{note}"
        )
        line = warn(f"crashkernel-entries:{name}", _TITLE, detail, why, fix, _evidence(entries), severity=severity)
        lines.append(line)
        note = ""  # said once, on the first line
    return lines
