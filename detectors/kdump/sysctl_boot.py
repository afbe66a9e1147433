"""What the sysctl configuration sets at boot, against the running value and against setup's snippet.

The running value (/proc/sys) is what a panic now would obey; the configuration (:mod:`collectors.kdump.sysctl_files`)
is what the next boot sets.  A policy setup wrote in paths.SYSCTL_SNIPPET is undone at boot by a later file setting
the key otherwise (a 99-local.conf, /etc/sysctl.conf): said, with the line, so that check and setup do not call the
policy in place while the next boot drops it.
"""

from __future__ import annotations

from forensics.types import kdump_paths as paths
from forensics.types.kdump import KdumpState, SysctlAssignment

#: The snippet's file name: what "applied after" is measured against.
SNIPPET_NAME = paths.SYSCTL_SNIPPET.rsplit("/", 1)[-1]


def where(assignment: SysctlAssignment) -> str:
    """``FILE line N sets NAME = VALUE``."""
    return f"{assignment.file.path} line {assignment.line} sets {assignment.name} = {assignment.value}"


def order_note(assignment: SysctlAssignment) -> str:
    """Why the line wins over the snippet: when it is applied."""
    if assignment.last:
        return "which sysctl --system applies after every sysctl.d file"
    return f"applied after {SNIPPET_NAME}"


def overriding(state: KdumpState, name: str, value: int) -> list[SysctlAssignment]:
    """The lines applied after the snippet that set ``name`` to something else than ``value``: each undoes the
    snippet's setting at boot (a later one setting it back does not make the earlier one harmless to keep)."""
    return [
        a
        for a in state.boot_sysctls
        if a.name == name
        and a.applied_after(SNIPPET_NAME)
        and a.file.path != paths.SYSCTL_SNIPPET
        and a.number() != value
    ]


def boot_override(state: KdumpState, name: str) -> SysctlAssignment | None:
    """The line that wins at boot for ``name`` when setup's snippet also sets it, and sets it otherwise."""
    winner = state.boot_sysctl(name)
    if winner is None or winner.file.path == paths.SYSCTL_SNIPPET:
        return None
    ours = next((a for a in state.boot_sysctls if a.name == name and a.file.path == paths.SYSCTL_SNIPPET), None)
    if ours is None or ours.number() == winner.number():
        return None
    return winner
