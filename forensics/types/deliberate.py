"""A crash requested with sysrq, as the dump and the log both know it: its marks and the baseline it is judged by.

``echo c > /proc/sysrq-trigger`` (Alt+SysRq+C, or a watchdog writing to sysrq-trigger) calls
``sysrq_handle_crash()`` (drivers/tty/sysrq.c), which panics "sysrq triggered crash" on current kernels
and writes through NULL on older ones; the kernel logs ``sysrq: Trigger a crash`` first (``SysRq : Trigger
a crash`` on older kernels).  The dump's crash finding (detectors/vmcore/findings.py), the log's report
(:func:`forensics.types.dmesg.group_judgement`) and the incident's reading of either
(detectors/incident/deliberate.py) use these, so the three judge one crash alike.
"""

from __future__ import annotations

import re

from forensics.model import Baseline

#: What marks a requested crash: the crashing function, the panic message, the sysrq line.
SYSRQ_MARKS = re.compile(r"sysrq_handle_crash|sysrq triggered crash|sysrq ?: trigger a crash", re.IGNORECASE)

#: A crash requested with sysrq: it broke nothing that was not asked for (low: who asked, and why, is worth a look).
FORCED = Baseline(
    "a crash forced by SysRq-c",
    "deliberate: nothing broke unexpectedly",
    "sysrq_handle_crash() panics on request (echo c > /proc/sysrq-trigger, drivers/tty/sysrq.c)",
)


#: How a requested crash is said, by the log's finding and the incident's (detectors/incident/deliberate.py).
REQUESTED = "requested with sysrq (echo c > /proc/sysrq-trigger, Alt+SysRq+C, or a watchdog writing to it)"
WHO = "a kdump test, an operator, or a watchdog or monitoring agent that judged the machine stuck"
#: The facts saying so: a finding that has the first is said as requested already.
REQUESTED_FACT = "requested"
WHO_FACT = "who asks for one"

#: What to do after a requested crash read from a kernel log without a dump: find who asked, on the machine that
#: crashed; no bug to search for (a dump's next steps are detectors/incident/deliberate.py's NEXT_STEPS).
LOG_NEXT_STEPS = (
    "journalctl -b -1 -n 200  # who requested it: what ran just before the crash; grep -rl sysrq-trigger /etc "
    "/usr/lib/systemd /usr/local (scripts and units that write it)",
    "if it was a kdump test, the dump it wrote is the test's result: kforensic kdump check",
    "if a watchdog or an operator crashed a stuck machine, the problem is what made it stuck: "
    "read the log's other findings (hung tasks, lockups, stalls) before the crash",
)


def requested_by_sysrq(texts: list[str]) -> bool:
    """Whether any of the texts (a title, a crashing function, a cited line) marks a crash requested with sysrq."""
    # Each mark holds "sysrq" in some case: the pattern (an alternation without case, tried at every character) is
    # searched only in a text whose case-folded form holds it (a ``ſ`` folds to the ``s`` the pattern takes it for),
    # and each text only when their join holds it (one test for a finding without: most of them).  Asked twice of
    # each finding a ranking (~1.6 ms each time for the corpus x4's 327 findings without either).
    if "sysrq" not in "\n".join(texts).casefold():
        return False
    return any("sysrq" in t.casefold() and SYSRQ_MARKS.search(t) for t in texts)
