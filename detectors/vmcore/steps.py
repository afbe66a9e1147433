"""The ``next:`` steps of a dump's findings, in a session that opens that dump.

A ``crash>`` step is no use on a dump crash cannot open: crash 8.0.2 (Debian 12, the crash the follow-up test
runs) opens the fixtures' 5.10 and 6.1 dumps and no 6.12 one ("seek error: kernel virtual address ...
page_offset_base"), while drgn reads every kernel the analysis read.  For a kernel newer than
:data:`CRASH_OPENS_UP_TO` a step is given in drgn's crash-compatible commands (``>>> %crash rd -32 ADDR``) where
drgn has the command, ``objdump`` on the module file for a module function's disassembly (drgn has no ``dis``),
and stays a ``crash>`` step (which a newer crash runs) only where neither does.
"""

from __future__ import annotations

import re
import shlex

from forensics.model import NotAvailable
from forensics.types.vmcore import CrashSnapshot

#: The newest kernel (major, minor) the crash the follow-ups are checked with opens (crash 8.0.2: 5.10 and 6.1 do,
#: 6.12 does not; see docs/vmcore.md, Follow-up).
CRASH_OPENS_UP_TO = (6, 1)
#: crash commands drgn's ``%crash`` runs as crash does on the dumps crash does not open (run on the 6.12 fixtures).
_DRGN_HAS = re.compile(r"(?:rd -32 0x[0-9a-f]+|bt(?: -a| \d+(?: \d+)*)?|kmem -i|log|mod -t|ps -G(?: \d+)+)")
_DIS_FUNCTION = re.compile(r"dis -l (\w+)")


def crash_opens(snap: CrashSnapshot) -> bool:
    """Whether the crash the follow-ups are checked with opens a dump of this kernel (an unknown release: yes)."""
    release = snap.kernel_release
    m = re.match(r"(\d+)\.(\d+)", release) if not isinstance(release, NotAvailable) else None
    return m is None or (int(m.group(1)), int(m.group(2))) <= CRASH_OPENS_UP_TO


def _module_file(snap: CrashSnapshot, function: str) -> str | None:
    """The debug file of the module whose frame runs ``function`` (or the only module file loaded), else None."""
    if isinstance(snap.follow_up, NotAvailable):
        return None
    files = dict(snap.follow_up.modules)
    named = {f.module for f in snap.backtrace if f.module and f.function == function}
    for module in named:
        if module in files:
            return files[module]
    return next(iter(files.values())) if len(files) == 1 else None


def crash_step(snap: CrashSnapshot, command: str) -> str:
    """One crash command (``rd -32 0x...``) as the step that runs on this dump: ``crash> CMD`` where crash opens
    it, else drgn's ``>>> %crash CMD`` or a shell command; ``crash> CMD`` where nothing else does it."""
    if crash_opens(snap):
        return f"crash> {command}"
    if _DRGN_HAS.fullmatch(command):
        return f">>> %crash {command}"
    dis = _DIS_FUNCTION.fullmatch(command)
    module = _module_file(snap, dis.group(1)) if dis else None
    if dis and module:
        return f"objdump -dlr --no-show-raw-insn --disassemble={dis.group(1)} {shlex.quote(module)}"
    return f"crash> {command}"


def crash_steps(snap: CrashSnapshot, *commands: str, note: str = "") -> str:
    """Several crash commands as :func:`crash_step` gives each, ``; ``-joined, the note after ``  # ``."""
    return "; ".join(crash_step(snap, c) for c in commands) + (f"  # {note}" if note else "")
