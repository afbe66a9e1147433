"""RT throttling's line in the kernel log.

Review ue19 #6: a log holding "sched: RT throttling activated" (printed by sched_rt_runtime_exceeded(),
kernel/sched/rt.c, once a boot, when real-time tasks ran a CPU's whole budget) said "0 report(s) and 0 event(s)
kept": the kernel's own statement that other tasks were kept off a CPU for up to 950 ms was not read.
"""

from __future__ import annotations

from pathlib import Path

from forensics.model import FindingKind, Severity
from forensics.pipelines.dmesg import analyse_logs

LOG = """\
[    0.000000] Linux version 6.18.44 (builder@host) (gcc (GCC) 15.3.0) #1 SMP PREEMPT_DYNAMIC
[  120.500000] bash[4242]: segfault at 0 ip 0000563c2a1f0e2a sp 00007ffd3b1c9d40 error 4 in bash[1e2a,563c2a1f0000+2000]
[  181.168376] sched: RT throttling activated
[  190.000000] eth0: link up
"""


def test_rt_throttling_is_an_event_judged_against_the_rt_budget(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(LOG)
    result = analyse_logs([str(log)], live=False)
    (examined,) = result.incident.examined
    assert examined.what.endswith("4 lines, 0 report(s) and 1 event(s) kept"), examined.what
    assert "RT throttling" in examined.could_find[0]
    (found,) = result.incident.findings
    assert found.kind is FindingKind.DMESG_RT_THROTTLING and found.title == "sched: RT throttling activated"
    # Medium: the CPU's other tasks got nothing for up to 950 ms of a second; the kernel worked as it promises.
    assert found.severity is Severity.MEDIUM
    assert found.baseline is not None and "sched_rt_runtime_us of sched_rt_period_us" in found.baseline.name
    assert found.baseline.value.startswith("950000 of 1000000 us by default"), found.baseline
    assert found.evidence[0].locator.start == 3
    assert any("rtprio" in step and "kforensic trace" in step for step in found.next_steps), found.next_steps
    assert not any("syzbot" in step for step in found.next_steps)


def test_a_throttled_rt_task_is_not_told_as_a_kernel_problem(tmp_path: Path) -> None:
    from detectors.incident.hypotheses import plain_summary

    log = tmp_path / "kern.log"
    log.write_text(LOG)
    findings = analyse_logs([str(log)], live=False).incident.findings
    said = plain_summary(findings, "vm")
    assert said.startswith("On vm, real-time tasks ran a CPU's whole RT budget and the kernel throttled them"), said
    assert "Linux kernel" not in said and "reported an error" not in said
