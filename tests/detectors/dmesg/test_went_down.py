"""Which reports of a log went down with their boot: those at or before the last report of their boot that a
panicked group lists (no step of theirs asks the live machine), read from each boot's last panic at once
(forensics.pipelines.dmesg.last_panics) as when each group went through every panicked group."""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.findings import report_boot
from forensics.pipelines.dmesg import analyse_logs, last_panics


def test_each_groups_boot_went_down_as_any_panicked_group_of_its_boot_at_or_after_it_says(tmp_path: Path) -> None:
    root = Path(__file__).parent
    logs = sorted([*root.glob("golden/*.log"), *root.glob("corpora/*/*.log")])
    # Each log twice over, as two boots where it has a banner: a panic of one boot is not the other's.
    copies = []
    for k, log in enumerate(logs):
        copy = tmp_path / f"{k}.log"
        copy.write_bytes(log.read_bytes() * 2)
        copies.append(copy)
    downs = groups = 0
    for source in analyse_logs([str(c) for c in copies], live=False).sources:
        boots = {g.first.start_line: report_boot(g.first) for g in source.groups}
        panics = [(boots[g.first.start_line], g.last.start_line) for g in source.groups if g.panicked]
        last = last_panics(source.groups, boots)
        for g in source.groups:
            down = any(b == boots[g.first.start_line] and at >= g.first.start_line for b, at in panics)
            assert (g.first.start_line <= last.get(boots[g.first.start_line], 0)) == down
            downs += down
            groups += 1
    assert 0 < downs < groups  # groups that went down with their boot, and others
