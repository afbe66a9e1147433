"""The ``next:`` steps of a dump's findings, in a session that opens that dump.

A ``crash>`` step is no use on a dump crash cannot open: crash 8.0.2 (Debian 12, the crash the follow-up test
runs) opens the fixtures' 5.10 and 6.1 dumps and no 6.12 one ("seek error: kernel virtual address ...
page_offset_base"), while drgn reads every kernel the analysis read.  Whether the installed crash opens the dump is
decided from its version (:attr:`FollowUp.crash_version`, read once a run) by
:data:`forensics.types.vmcore.CRASH_REACH`; where it does not, a step is given in drgn's crash-compatible commands
(``>>> %crash rd -32 ADDR``) where drgn has the command, ``objdump`` on the module file for a module function's
disassembly (drgn has no ``dis``), gdb on vmlinux for a kernel function's, and stays a ``crash>`` step (which a newer
crash runs) only where none does.
"""

from __future__ import annotations

import re
from dataclasses import replace

from forensics.model import Finding, NotAvailable
from forensics.quoting import shell_word
from forensics.types.vmcore import CrashSnapshot, opened_by_some_crash
from forensics.types.vmcore import crash_opens as crash_opens_release

#: crash commands drgn's ``%crash`` runs as crash does on the dumps crash does not open (each run on the 6.12
#: fixtures; drgn 0.3's ``bt -FF`` and ``rd -SS`` stop on a slab page makedumpfile left out, ``struct`` has no -o).
_DRGN_HAS = re.compile(
    r"(?:rd -32 0x[0-9a-f]+|bt(?: -a| \d+(?: \d+)*)?|kmem (?:-i|0x[0-9a-f]+|-s \S+)|log|mod -t|ps -G(?: \d+)+)"
)
#: crash commands drgn runs in another form: (crash's, drgn's) -- the frames' raw words for ``bt -FF``'s symbolic ones,
#: the words for ``rd -SS``'s with their slab objects named.
_DRGN_AS = (
    (re.compile(r"bt -FF"), "%crash bt -f"),
    (re.compile(r"rd -SS (0x[0-9a-f]+) (\d+)"), r"%crash rd -64 \1 \2"),
    (re.compile(r"struct -o (\w+)"), r'[(m.name, m.offset) for m in prog.type("struct \1").members]'),
)
_DIS_FUNCTION = re.compile(r"dis -l ([\w.]+)")  # a .cold part too: kf_msg_submit.cold
_DIS_ADDRESS = re.compile(r"dis -rl (0x[0-9a-f]+)")


def crash_opens(snap: CrashSnapshot) -> bool:
    """Whether the steps are given as crash's: where the installed crash is known to open a dump of this kernel (its
    version and the release read, :data:`forensics.types.vmcore.CRASH_REACH`).  Where that is unknown (crash not
    installed, a release of it with no record) the steps are crash's for a kernel some crash release is recorded to
    open, drgn's otherwise -- drgn is what read the dump, so its steps run wherever this report was made; the
    follow-up says the unknown and why (forensics/report/vmcore.py)."""
    crash = snap.follow_up.crash_version if not isinstance(snap.follow_up, NotAvailable) else snap.follow_up
    opens = crash_opens_release(snap.kernel_release, crash)
    if isinstance(opens, bool):
        return opens
    return opened_by_some_crash(snap.kernel_release) is not False


def _disassembly(snap: CrashSnapshot, command: str) -> str | None:
    """The shell command that disassembles what ``dis -l FUNC`` or ``dis -rl ADDR`` does, with its source lines: the
    function of a frame (by name, or the symbol holding the pc) or one that takes the spinner's spinlock; objdump on
    a module's debug file (gdb resolves no symbol of an unrelocated .ko), gdb on vmlinux.  None where neither is
    known."""
    if isinstance(snap.follow_up, NotAvailable):
        return None
    files = dict(snap.follow_up.modules)
    by_name = _DIS_FUNCTION.fullmatch(command)
    by_pc = _DIS_ADDRESS.fullmatch(command)
    found: tuple[str, str | None] | None = None
    for frame in snap.backtrace:
        symbol = frame.code_symbol()
        named = by_name is not None and by_name.group(1) in (frame.function, frame.symbol)
        if isinstance(symbol, str) and (named or (by_pc is not None and frame.pc == int(by_pc.group(1), 16))):
            found = (symbol if by_pc else by_name.group(1) if by_name else str(frame.function), frame.module)
            break
    lock = snap.spinlock
    if found is None and by_name and not isinstance(lock, NotAvailable) and by_name.group(1) in lock.takers:
        found = (by_name.group(1), next((f.module for f in snap.backtrace if f.function in lock.takers), None))
    if found is None:
        return None
    function, module = found
    if module is not None:
        return None if module not in files else (
            f"objdump -dlr --no-show-raw-insn --disassemble={function} {shell_word(files[module])}"
        )  # fmt: skip
    vmlinux = snap.follow_up.vmlinux
    return None if isinstance(vmlinux, NotAvailable) else (
        f"gdb -batch -ex {shell_word(f'disassemble /s {function}')} {shell_word(vmlinux)}"
    )  # fmt: skip


def crash_step(snap: CrashSnapshot, command: str) -> str:
    """One crash command (``rd -32 0x...``) as the step that runs on this dump: ``crash> CMD`` where crash opens
    it, else drgn's ``>>> %crash CMD`` or a shell command; ``crash> CMD`` where nothing else does it."""
    if crash_opens(snap):
        return f"crash> {command}"
    if _DRGN_HAS.fullmatch(command):
        return f">>> %crash {command}"
    by_pid = _by_pid(snap, command)
    if by_pid is not None:
        return by_pid
    for crash, drgn in _DRGN_AS:
        if crash.fullmatch(command):
            return ">>> " + crash.sub(drgn, command)
    return _disassembly(snap, command) or f"crash> {command}"


def runs_here(snap: CrashSnapshot, command: str) -> bool:
    """Whether a crash command has a form that runs on this dump (:func:`crash_step` gives more than ``crash> CMD``
    only then).  drgn's ``ps -m`` reads ``sched_info.last_arrival``, which a kernel without CONFIG_SCHED_INFO lacks
    (the 6.12 fixtures): not one of drgn's here."""
    return crash_step(snap, command) != f"crash> {command}" or crash_opens(snap)


def _by_pid(snap: CrashSnapshot, command: str) -> str | None:
    """drgn's form of a crash command over a set of tasks drgn has no selector for: ``foreach UN bt`` as ``bt`` of
    the dump's D-state tasks; ``ps -G`` over the task list, by the pids of the memory users where the task list
    walk breaks (makedumpfile left a task_struct out: ``ps`` without pids stops at it, "Excluded page")."""
    if command == "foreach UN bt":
        pids = [str(t.pid) for t in snap.tasks if t.state == "D"]
        return f">>> %crash bt {' '.join(pids)}" if pids else None
    if command == "ps -G":
        if snap.task_census.complete and not snap.task_census.breaks:
            return ">>> %crash ps -G"
        users = () if isinstance(snap.memory_users, NotAvailable) else snap.memory_users
        pids = [str(u.pid) for u in users if u.kind == "task" and u.pid is not None][:8]
        return f">>> %crash ps -G {' '.join(pids)}" if pids else None
    return None


def on_dump(snap: CrashSnapshot, step: str) -> str:
    """A step of ``crash>`` commands (``crash> A; crash> B  # why``) as :func:`crash_steps` gives it for this dump;
    any other step as it is."""
    command, _, note = step.partition("  # ")
    pieces = command.split("; ")
    if crash_opens(snap) or not all(p.startswith("crash> ") for p in pieces):
        return step
    return crash_steps(snap, *(p.removeprefix("crash> ") for p in pieces), note=note)


def crash_steps(snap: CrashSnapshot, *commands: str, note: str = "") -> str:
    """Several crash commands as :func:`crash_step` gives each, ``; ``-joined, the note after ``  # ``."""
    # (once each: two crash commands may run as one drgn command, ``foreach UN bt`` and ``bt PID`` as ``bt PID``)
    return "; ".join(dict.fromkeys(crash_step(snap, c) for c in commands)) + (f"  # {note}" if note else "")


def finding_on_dump(snap: CrashSnapshot, finding: Finding) -> Finding:
    """A finding with its next steps (and its stated cause's) as :func:`on_dump` gives them for this dump."""
    if crash_opens(snap):
        return finding
    stated = finding.stated
    return replace(
        finding,
        next_steps=tuple(on_dump(snap, step) for step in finding.next_steps),
        stated=None if stated is None else replace(stated, next_command=on_dump(snap, stated.next_command)),
    )
