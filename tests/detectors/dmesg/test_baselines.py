"""Every finding of a kernel log names the baseline its severity was judged against (docs/severity.md, "Kernel
logs"): the fixture kernels' real console logs and the golden logs, through the CLI's JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.model import Baseline, Severity
from forensics.types.deliberate import FORCED
from forensics.types.dmesg import KIND_BASELINES, PANICKED, WENT_DOWN, WENT_DOWN_SOURCE, ReportKind
from tests.vmcore_cases import console_logs, kernels

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.log"))


def _logs() -> list[Path]:
    return [log for kernel in kernels() for log in console_logs(kernel)] + GOLDEN


def _judged(finding: dict[str, object]) -> tuple[str, str, str] | None:
    b = finding.get("baseline")
    return (b["name"], b["value"], b["source"]) if isinstance(b, dict) else None


def _as_tuple(b: Baseline) -> tuple[str, str, str]:
    return (b.name, b.value, b.source)


def test_every_log_finding_names_its_baseline() -> None:
    logs = _logs()
    if not logs:
        pytest.skip("no logs")
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", *map(str, logs), "-f", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    findings = json.loads(ran.stdout)["incident"]["findings"]
    assert len(findings) >= len(logs)
    assert len({f["kind"] for f in findings}) >= 10  # many kinds, not one
    for f in findings:
        judged = _judged(f)
        assert judged is not None, f["title"]
        if judged == _as_tuple(FORCED):
            assert (f["severity"], "sysrq" in f["title"]) == ("low", True), f["title"]
        elif judged[:2] == _as_tuple(PANICKED)[:2]:
            assert f["severity"] == "critical", f["title"]
            # its source names the panic line by number where the report holds it
            assert judged[2] == PANICKED.source or re.fullmatch(re.escape(PANICKED.source) + r", line \d+", judged[2])
        elif judged[0] == WENT_DOWN:  # no panic line, the machine went down all the same (to kdump)
            assert f["severity"] == "critical", f["title"]
            assert judged[1].startswith("the machine went down: ") and judged[2] == WENT_DOWN_SOURCE, f["title"]
        else:  # not panicked on: its kind's baseline, at its rule's severity (with the threshold it prints)
            kind = KIND_BASELINES[ReportKind(f["kind"].removeprefix("dmesg."))]
            name, value, source = judged
            assert (name, source) == (kind.name, kind.source), f["title"]
            # (an OOM's says what the OOM killer did: a kill or a panic, with its line)
            assert value == kind.value or value.startswith(("exceeded: line ", "exhausted")), f["title"]
    # The fixtures panic on every report; the golden logs hold reports the kernel went on after.
    said = {_judged(f) for f in findings}
    assert _as_tuple(FORCED) in said
    assert any(j is not None and j[:2] == _as_tuple(PANICKED)[:2] and j[2] != PANICKED.source for j in said)
    names = {j[0] for j in said if j is not None}
    assert {KIND_BASELINES[ReportKind.SOFT_LOCKUP].name, KIND_BASELINES[ReportKind.HANG].name} <= names


#: Reports the kernel went on after, each printing the value it was judged by (written here in the kernel's formats,
#: around the fixture kernel's functions).
_PRINTING = """\
[   88.500001] watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [kf_spinner:61]
[   88.500010] Modules linked in: kf_buggy(O)
[   88.500020] CPU: 1 PID: 61 Comm: kf_spinner Tainted: G           O L     6.1.192 #1
[   88.500030] RIP: 0010:kf_spinner_fn+0x12/0x30 [kf_buggy]
[   88.500040] Call Trace:
[   88.500042]  <TASK>
[   88.500050]  kthread+0xe4/0x110
[   88.500060]  ret_from_fork+0x1f/0x30
[   88.500062]  </TASK>
[  130.200001] rcu: INFO: rcu_preempt self-detected stall on CPU
[  130.200010] rcu: \t1-....: (21002 ticks this GP) idle=b4c/1/0x4000000000000000 softirq=1702/1702 fqs=5214
[  130.200020] \t(t=21003 jiffies g=2837 q=112 ncpus=2)
[  130.200030] CPU: 1 PID: 61 Comm: kf_spinner Tainted: G           O L     6.1.192 #1
[  130.200040] RIP: 0010:kf_spinner_fn+0x12/0x30 [kf_buggy]
[  130.200050] Call Trace:
[  130.200052]  <IRQ>
[  130.200060]  rcu_sched_clock_irq+0x2c5/0x9a0
[  130.200070]  update_process_times+0x5f/0x90
[  130.200080]  </IRQ>
[  130.200082]  <TASK>
[  130.200090]  kf_spinner_fn+0x12/0x30 [kf_buggy]
[  130.200100]  kthread+0xe4/0x110
[  130.200110]  ret_from_fork+0x1f/0x30
[  130.200112]  </TASK>
[  245.120001] INFO: task kf_waiter:57 blocked for more than 122 seconds.
[  245.120010]       Tainted: G           O L     6.1.192 #1
[  245.120020] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[  245.120030] task:kf_waiter       state:D stack:0     pid:57    ppid:2      flags:0x00004000
[  245.120040] Call Trace:
[  245.120042]  <TASK>
[  245.120050]  __schedule+0x2f1/0x8a0
[  245.120060]  schedule+0x5a/0xd0
[  245.120070]  schedule_preempt_disabled+0x11/0x20
[  245.120080]  __mutex_lock.constprop.0+0x2a3/0x4b0
[  245.120090]  kf_waiter_update+0x1c/0x50 [kf_buggy]
[  245.120100]  kthread+0xe4/0x110
[  245.120110]  ret_from_fork+0x1f/0x30
[  245.120112]  </TASK>
"""


def test_a_threshold_the_log_prints_is_the_baseline_with_its_line(tmp_path: Path) -> None:
    from forensics.pipelines.dmesg import analyse_logs

    log = tmp_path / "kern.log"
    log.write_text(_PRINTING)
    findings = {f.kind.value.removeprefix("dmesg."): f for f in analyse_logs([str(log)], live=False).incident.findings}
    printed = {
        ReportKind.SOFT_LOCKUP: 'line 1 prints "stuck for 23s!"',
        ReportKind.RCU_STALL: 'line 12 prints "t=21003 jiffies"',
        ReportKind.HANG: 'line 25 prints "blocked for more than 122 seconds"',
    }
    for kind, said in printed.items():
        baseline = findings[kind.value].baseline
        assert baseline is not None, kind
        assert baseline.value.startswith(f"exceeded: {said}, "), baseline.value
        assert (baseline.name, baseline.source) == (KIND_BASELINES[kind].name, KIND_BASELINES[kind].source)
        assert findings[kind.value].severity is not Severity.CRITICAL  # none of them panicked


def test_every_report_kind_has_a_baseline() -> None:
    assert set(KIND_BASELINES) == set(ReportKind)
    assert all(b.name and b.value and b.source for b in KIND_BASELINES.values())


def test_an_oom_made_a_panic_is_not_said_to_have_killed_a_task() -> None:
    # 09-oom runs with vm.panic_on_oom=1: no "Killed process" line, the panic at line 284.  Its baseline said "the OOM
    # killer killed a task to free memory" (ue17 #3).
    from forensics.model import FindingKind
    from forensics.pipelines.dmesg import analyse_logs

    root = Path(__file__).resolve().parents[3]
    panicked = analyse_logs([str(root / "vmcore_fixtures/cases/09-oom/console.log")], live=False)
    (oom,) = [f for f in panicked.incident.findings if f.kind is FindingKind.DMESG_OOM]
    assert oom.baseline is not None and "killed a task" not in oom.baseline.value
    assert oom.baseline.value.startswith("exhausted; no task was killed: panic_on_oom made the OOM a panic (line 284: ")
    # A kill is said with its line.
    killed = analyse_logs([str(Path(__file__).parent / "golden" / "oom_kill.log")], live=False)
    (oom,) = killed.incident.findings
    assert oom.baseline is not None
    assert oom.baseline.value.endswith("killed a task to free memory (line 21: pid 4242, memhog)")


def test_an_oom_panic_is_worded_from_its_panic_line(tmp_path: Path) -> None:
    # 09-oom's panic line as kernels 2.6-4.18 print it when out_of_memory() finds no task to kill: the baseline said
    # "panic_on_oom made the OOM a panic (line 284: Out of memory and no killable processes...)", a cause its own
    # quote contradicts.
    from forensics.model import FindingKind
    from forensics.pipelines.dmesg import analyse_logs

    root = Path(__file__).resolve().parents[3]
    text = (root / "vmcore_fixtures/cases/09-oom/console.log").read_text()
    said = "Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled"
    assert said in text
    log = tmp_path / "no-killable.log"
    log.write_text(text.replace(said, "Kernel panic - not syncing: Out of memory and no killable processes..."))
    (oom,) = [f for f in analyse_logs([str(log)], live=False).incident.findings if f.kind is FindingKind.DMESG_OOM]
    assert oom.baseline is not None
    assert oom.baseline.value == (
        "exhausted; no task was killed: the OOM killer found no task it could kill, and out_of_memory() panics then "
        "(line 284: Out of memory and no killable processes...)"
    )
