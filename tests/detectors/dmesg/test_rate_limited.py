"""Rate limiting's lines and the network stack's drop lines.

A reviewer's log said "net_ratelimit: 4231 callbacks suppressed", "__warn_printk: 57 callbacks suppressed" and
"printk: 1893 messages suppressed.": the WARNING's count was given as exact ("occurrences: 2"), and "TCP: out of
memory -- consider tuning tcp_mem" and "nf_conntrack: nf_conntrack: table full, dropping packet" (packets and
connections dropped) were not read at all: "0 event(s) kept".  The lines here are printed as the kernel prints them
(lib/ratelimit.c's ___ratelimit(), net/netfilter/nf_conntrack_core.c, net/ipv4/tcp.c).
"""

from __future__ import annotations

from pathlib import Path

from forensics.model import Severity
from forensics.pipelines.dmesg import analyse_logs


def _warning(t: float, cpu: int, pid: int) -> list[str]:
    body = [
        "------------[ cut here ]------------",
        f"WARNING: CPU: {cpu} PID: {pid} at net/ipv4/tcp_output.c:1530 tcp_fragment+0x3a2/0x3d0",
        f"CPU: {cpu} PID: {pid} Comm: nginx Not tainted 6.6.30 #1",
        "RIP: 0010:tcp_fragment+0x3a2/0x3d0",
        "Call Trace:",
        " <IRQ>",
        " tcp_write_xmit+0x2f1/0x1360",
        " </IRQ>",
        "---[ end trace 0000000000000000 ]---",
    ]
    return [f"[{t + i * 1e-5:12.6f}] {line}" for i, line in enumerate(body)]


def _log(tmp_path: Path, suppressed: bool = True) -> Path:
    lines = [
        *_warning(500.0, 0, 300),
        "[  505.000000] net_ratelimit: 4231 callbacks suppressed" if suppressed else "[  505.000000] eth0: link up",
        "[  505.000010] TCP: out of memory -- consider tuning tcp_mem",
        *_warning(510.0, 1, 301),
        "[  515.000000] nf_conntrack: nf_conntrack: table full, dropping packet",
        "[  515.000010] nf_conntrack: nf_conntrack: table full, dropping packet",
    ]
    path = tmp_path / "kern.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_drops_are_events_and_counts_are_lower_bounds(tmp_path: Path) -> None:
    result = analyse_logs([str(_log(tmp_path))], live=False)
    (source,) = result.sources
    assert [(g.first.title, g.first.start_line, g.count) for g in source.groups if g.first.is_event] == [
        ("TCP: out of memory -- consider tuning tcp_mem", 11, 1),
        ("nf_conntrack: table full, dropping packet", 21, 2),
    ]
    found = {f.title: f for f in result.incident.findings}
    assert found["nf_conntrack: table full, dropping packet"].fact("occurrences") == "at least 2"
    assert found["WARNING in tcp_fragment"].fact("occurrences") == "at least 2"
    # One line, and two lines 10 us apart: a spike the stack recovered from, low, with the rule and what was read.
    for title, read in (
        ("TCP: out of memory -- consider tuning tcp_mem", "(here one line)"),
        ("nf_conntrack: table full, dropping packet", "(here 2 lines over 0 s)"),
    ):
        assert found[title].severity is Severity.LOW
        baseline = found[title].baseline
        assert baseline is not None and baseline.name.startswith("the network stack's limits"), baseline
        assert (
            baseline.value.startswith("one line: low; repeated over 60 s or more: medium ") and read in baseline.value
        )
        assert not any("syzbot" in step for step in found[title].next_steps), found[title].next_steps
    assert "sysctl net.ipv4.tcp_mem" in found["TCP: out of memory -- consider tuning tcp_mem"].next_steps[0]
    conntrack = found["nf_conntrack: table full, dropping packet"].next_steps[0]
    assert "sysctl net.netfilter.nf_conntrack_count net.netfilter.nf_conntrack_max" in conntrack
    assert "conntrack -S" in conntrack
    (examined,) = result.incident.examined
    assert any(
        x.startswith("the messages rate limiting suppressed (line 10: net_ratelimit: 4231 callbacks suppressed)")
        for x in examined.could_not
    ), examined.could_not


def test_without_rate_limiting_a_count_is_exact(tmp_path: Path) -> None:
    result = analyse_logs([str(_log(tmp_path, suppressed=False))], live=False)
    found = {f.title: f for f in result.incident.findings}
    assert found["WARNING in tcp_fragment"].fact("occurrences") == "2"
    (examined,) = result.incident.examined
    assert not any("suppressed" in x for x in examined.could_not)


def test_drops_repeated_over_a_minute_are_medium(tmp_path: Path) -> None:
    # The table stays full under load: a drop line every 15 s for 90 s (net_ratelimit() lets a few through).
    lines = [f"[{600.0 + 15 * k:12.6f}] nf_conntrack: nf_conntrack: table full, dropping packet" for k in range(7)]
    path = tmp_path / "kern.log"
    path.write_text("\n".join(lines) + "\n")
    (finding,) = analyse_logs([str(path)], live=False).incident.findings
    assert finding.severity is Severity.MEDIUM
    assert finding.baseline is not None and "(here 7 lines over 90 s)" in finding.baseline.value
    # 45 s of them is still below the minute: low.
    path.write_text("\n".join(lines[:4]) + "\n")
    (finding,) = analyse_logs([str(path)], live=False).incident.findings
    assert finding.severity is Severity.LOW
