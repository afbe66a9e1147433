"""Fuzzing the config parsers and the whole check/plan/apply cycle with arbitrary config text."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.kdump.config import parse_kdump_conf, parse_kdump_tools
from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.crashkernel import parse_crashkernel
from detectors.kdump.makedumpfile import parse_collector
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.pipelines.kdump import run_setup
from forensics.types.kdump import TextFile
from tests.collectors.kdump.roots import SCENARIOS, build

# Lines that look like the real formats, mixed with noise.
_WORDS = st.sampled_from(
    [
        "path",
        "core_collector",
        "makedumpfile",
        "-l",
        "-z",
        "-d",
        "31",
        "99",
        "--dump-dmesg",
        "ext4",
        "nfs",
        "ssh",
        "raw",
        "USE_KDUMP=1",
        "USE_KDUMP=0",
        'MAKEDUMP_ARGS="-c',
        '-d 31"',
        "KDUMP_COREDIR=/var/crash",
        "#",
        "'",
        '"',
        "\t",
        "=",
        "é",
    ]
)
_LINES = st.lists(st.one_of(st.lists(_WORDS, max_size=6).map(" ".join), st.text(max_size=30)), max_size=12)


def _file(lines: list[str], path: str) -> TextFile:
    return TextFile(path=path, source=path, lines=tuple("\n".join(lines).split("\n")))


@given(_LINES)
def test_parsers_never_raise_and_cite_real_lines(lines: list[str]) -> None:
    for parse, path in ((parse_kdump_conf, "/etc/kdump.conf"), (parse_kdump_tools, "/etc/default/kdump-tools")):
        file = _file(lines, path)
        config = parse(file)
        for item in (*config.entries, *config.problems):
            assert file.lines[item.line - 1] == item.text


@given(st.text(max_size=40))
def test_crashkernel_parser_raises_only_value_error(text: str) -> None:
    try:
        parsed = parse_crashkernel(text)
    except ValueError:
        return
    assert parsed.size_for(8 << 30) >= 0


@given(st.text(max_size=60))
def test_collector_parser_never_raises(text: str) -> None:
    options = parse_collector(text)
    assert options.dump_level is None or 0 <= options.dump_level <= 31


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES, st.sampled_from(["rhel9-ready", "debian12-ready"]))
def test_any_config_is_checked_and_the_plan_converges(lines: list[str], scenario: str) -> None:
    debian = scenario.startswith("debian")
    system = replace(SCENARIOS[scenario], config="\n".join(lines) + "\n")
    with tempfile.TemporaryDirectory() as top:
        root = build(Path(top) / "root", system)
        state = collect_kdump_state(root, system.statvfs)
        checklist = run_checklist(state)
        assert checklist.lines
        run_setup(root, policy_named("none"), apply=True, statvfs=system.statvfs)
        again = collect_kdump_state(root, system.statvfs)
        plan = make_plan(again, run_checklist(again), policy_named("none"))
        config_path = "/etc/default/kdump-tools" if debian else "/etc/kdump.conf"
        assert [c.path for c in plan.changes if c.path == config_path] == []
