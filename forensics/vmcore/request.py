"""What the user asked of the debug info search: a record without drgn.

The command builds it before anything is opened; importing it does not import drgn (0.05-0.1 s of a run that a
missing or damaged dump ends before drgn is needed).  :mod:`forensics.vmcore.program` uses it and names it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DebugInfoRequest:
    """Where the user said debug info is, and whether debuginfod may be asked."""

    vmlinux: Path | None = None
    debug_dirs: tuple[Path, ...] = ()
    module_debug: tuple[Path, ...] = ()
    source_dirs: tuple[Path, ...] = ()  # kernel/module source trees for BUG/WARN lines (--source-dir)
    # debuginfod servers: None = $DEBUGINFOD_URLS (as libdebuginfod), () = none (--no-debuginfod)
    debuginfod: tuple[str, ...] | None = None
    root: Path = Path("/")  # where the standard places are (tests pass a tree)
