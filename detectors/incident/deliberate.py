"""Crashes someone asked for: a sysrq crash is deliberate, not a kernel bug to search for.

``echo c > /proc/sysrq-trigger`` (or Alt+SysRq+C on a console, or a watchdog or
monitoring agent writing to sysrq-trigger) calls ``sysrq_handle_crash()``, which
crashes on purpose (drivers/tty/sysrq.c: a panic "sysrq triggered crash" on
current kernels, a NULL write on older ones).  The kernel logs ``sysrq: Trigger
a crash`` first (``SysRq : Trigger a crash`` on older kernels).
Such a crash is how kdump is tested, and how operators and watchdogs take a
dump of a machine they judged stuck: the question is who asked, and why.

A panic a setting asked for (vm.panic_on_oom, kernel.panic_on_warn, kernel.hung_task_panic, ...) is no
bug either: the setting turned an OOM, a WARNING or a hang into a panic, and the cause is that event
(the memory hog, the WARNING, the hung task), which the log reports on its own (:func:`configured_panic`).
"""

from __future__ import annotations

import dataclasses
import re

from forensics.model import KERNEL_LOG_KINDS, Fact, Finding, FindingKind
from forensics.types.deliberate import REQUESTED, REQUESTED_FACT, WHO, WHO_FACT, requested_by_sysrq

#: What to do after a deliberate crash: find who asked and why; the dump is the state they wanted kept.
_WHO_ASKED = (
    "who requested it: the kernel log up to the crash (in the dump); on the crashed machine, "
    "journalctl -b -1 -n 200 and grep -rl sysrq-trigger /etc /usr/lib/systemd /usr/local "
    "(scripts and units that write it)"
)
NEXT_STEPS = (
    # A next step is "command  # prose" (forensics/report/vmcore.py next_commands): the command runs on the
    # dump where the report was made; what only the crashed machine can answer goes in the prose.
    f"crash> log  # {_WHO_ASKED}",
    "if it was a kdump test, the dump is the test's result: kforensic kdump check",
    "if a watchdog or an operator crashed a stuck machine, the problem is what made it stuck: "
    "read the other findings and the hung or busy tasks in the dump",
)


def is_deliberate(finding: Finding) -> bool:
    """Whether a crash finding (dump or log) is a crash requested with sysrq."""
    kind = finding.kind
    if not (kind is FindingKind.CRASH or kind in KERNEL_LOG_KINDS):
        return False
    texts = [finding.title, *(f.value for f in finding.facts if f.name in _MARKED_FACTS)]
    texts += [e.excerpt for e in finding.evidence[:3]]
    return requested_by_sysrq(texts)


#: Panic messages a setting asked for, by the setting (kernel/panic.c, mm/oom_kill.c, kernel/hung_task.c,
#: kernel/watchdog.c, kernel/rcu/tree_stall.h): the panic is the policy's, its cause the event before it.
CONFIGURED_PANICS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Out of memory: (?:system-wide|compulsory) panic_on_oom is enabled"), "vm.panic_on_oom"),
    (re.compile(r"\bpanic_on_warn set\b"), "kernel.panic_on_warn"),
    (re.compile(r"\bpanic_on_taint set\b"), "kernel.panic_on_taint"),
    (re.compile(r"hung_task: blocked tasks"), "kernel.hung_task_panic"),
    (re.compile(r"softlockup: hung tasks"), "kernel.softlockup_panic"),
    (re.compile(r"^kernel panic: Hard LOCKUP$"), "kernel.hardlockup_panic"),
    (re.compile(r"^kernel panic: RCU Stall$"), "kernel.panic_on_rcu_stall"),
)


def configured_panic(finding: Finding) -> str | None:
    """The setting that asked for a kernel log's panic (``vm.panic_on_oom``), None for any other report.

    A sysrq crash is :func:`is_deliberate`'s; this is the other panics no bug made: the report before
    the panic (the OOM, the WARNING, the hang) is the finding to explain.
    """
    if finding.kind not in KERNEL_LOG_KINDS or not finding.title.startswith("kernel panic: "):
        return None
    return next((setting for pattern, setting in CONFIGURED_PANICS if pattern.search(finding.title)), None)


#: The facts of a dump's crash finding that may name a requested crash.
_MARKED_FACTS = ("crashing function", "panic message")


def deliberate_crash(findings: tuple[Finding, ...]) -> Finding | None:
    """The requested crash among the findings, the dump's first, None when there is none."""
    crashes = [f for f in findings if is_deliberate(f)]
    return min(crashes, key=lambda f: f.kind is not FindingKind.CRASH, default=None)


def mark(finding: Finding) -> Finding:
    """A deliberate crash finding said as such: who may have asked, and next steps about that, not a bug hunt."""
    if not is_deliberate(finding) or finding.fact(REQUESTED_FACT):
        return finding  # (a kernel log's finding of it is said so by its detector, with the log's next steps)
    return dataclasses.replace(
        finding,
        summary=f"{finding.summary} The crash was {REQUESTED}: {WHO}; not a kernel bug.",
        facts=(*finding.facts, Fact(REQUESTED_FACT, REQUESTED), Fact(WHO_FACT, WHO)),
        next_steps=IN_DRGN if _in_drgn(finding.next_steps) else NEXT_STEPS,
    )


#: The same steps for a dump whose steps the analysis gave in drgn (detectors/vmcore/steps.py: a kernel the crash the
#: steps are checked with does not open, 6.12 for crash 8.0.2): `report` printed "crash> log" for such a dump.
IN_DRGN = (f">>> %crash log  # {_WHO_ASKED}", *NEXT_STEPS[1:])


def _in_drgn(steps: tuple[str, ...]) -> bool:
    """Whether a dump's steps were given for drgn (its ``>>> %crash`` commands), none for crash."""
    return any(s.startswith(">>> ") for s in steps) and not any(s.startswith("crash> ") for s in steps)
