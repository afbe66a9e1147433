"""Co-growth: caches growing together in fixed ratios become one finding naming the user action."""

from __future__ import annotations

import numpy as np

from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.cogrowth import SIGNATURES, match_signature, moves_together, related
from detectors.leaks.evidence import frame_text, sample_resolver
from forensics.model import LocatorKind, Severity
from tests.detectors.leaks.frames_for_tests import slab_frame, two_hours
from tests.helpers import assert_evidence_resolves


def test_a_udp_socket_leak_is_one_finding_naming_the_action() -> None:
    walls, hours = two_hours()
    sockets = 2000 * hours
    frame = slab_frame(
        walls,
        {
            "sock_inode_cache": (832, 100 + sockets),
            "UDP": (1344, 20 + sockets),
            "dentry": (192, 80_000 + sockets),
            "filp": (256, 3_000 + sockets),
            "kmalloc-64": (64, 9_000 + sockets),
            "kmalloc-512": (512, np.full(len(walls), 4_000.0)),
        },
    )
    result = analyse(LeakInput(frame, reclaim_account={"dentry": True}, source="s.sqlite"))
    [group] = result.groups
    assert group.signature is not None and group.signature.subject == "UDP sockets"
    assert group.names[0] == "UDP"
    assert set(group.names) == {"UDP", "sock_inode_cache", "dentry", "filp", "kmalloc-64"}
    assert all(abs(r - 1.0) < 0.02 for r in group.ratios)
    [finding] = result.findings
    assert finding.kind == "slab-leak-group"
    assert finding.severity is Severity.HIGH
    assert "UDP sockets" in finding.title and "never closes them" in finding.summary
    assert_evidence_resolves(result.findings, resolvers={LocatorKind.SAMPLE: sample_resolver(frame_text(frame))})


def test_two_independent_steady_leaks_stay_two_findings() -> None:
    walls, hours = two_hours()
    frame = slab_frame(walls, {"foo_cache": (512, 100 + 4000 * hours), "bar_cache": (256, 50 + 9000 * hours)})
    result = analyse(LeakInput(frame))
    assert result.groups == ()
    assert sorted(f.kind for f in result.findings) == ["slab-leak", "slab-leak"]


def test_unknown_caches_that_grow_at_the_same_moments_are_grouped() -> None:
    walls, _ = two_hours()
    rng = np.random.default_rng(5)
    bursts = np.cumsum(rng.gamma(0.5, 1.0, len(walls))) * 400  # irregular, shared by both caches
    frame = slab_frame(walls, {"foo_cache": (512, 100 + bursts), "bar_cache": (256, 50 + 3 * bursts)})
    result = analyse(LeakInput(frame))
    [group] = result.groups
    assert group.signature is None
    assert set(group.names) == {"foo_cache", "bar_cache"}
    [finding] = result.findings
    assert "unknown" in finding.summary and "foo_cache" in finding.title


def test_process_leak_signature() -> None:
    walls, hours = two_hours()
    tasks = 800 * hours
    frame = slab_frame(
        walls,
        {"task_struct": (4416, 300 + tasks), "pid": (128, 400 + tasks), "signal_cache": (1088, 250 + tasks)},
    )
    result = analyse(LeakInput(frame))
    [group] = result.groups
    assert group.signature is not None and group.signature.subject == "processes and threads"


def test_signatures_are_ordered_specific_first() -> None:
    assert match_signature(("UDP", "sock_inode_cache", "dentry")) is SIGNATURES[0]
    found = match_signature(("sock_inode_cache", "filp"))
    assert found is not None and found.subject == "sockets"
    found = match_signature(("filp", "inode_cache", "dentry"))
    assert found is not None and found.subject == "pipes"
    found = match_signature(("filp", "dentry"))
    assert found is not None and found.subject == "open files"
    assert match_signature(("foo_cache",)) is None


def test_relatedness_and_moving_together() -> None:
    assert related("UDP", "kmalloc-64")
    assert related("vm_area_struct", "maple_node")
    assert not related("foo_cache", "kmalloc-64")
    steady = np.arange(30.0)
    assert not moves_together(steady, 2 * steady)  # steady ramps carry no timing
    rng = np.random.default_rng(1)
    steps = np.cumsum(rng.exponential(1.0, 30))
    assert moves_together(steps, 3 * steps + 7)
    assert not moves_together(steps, np.cumsum(rng.exponential(1.0, 30)))


def test_a_merged_cache_is_seen_through_its_aliases() -> None:
    walls, hours = two_hours()
    sockets = 1500 * hours
    frame = slab_frame(
        walls,
        {
            "signal_cache": (1152, 150 + sockets),  # slabinfo shows signal_cache; UNIX is merged into it
            "sock_inode_cache": (832, 100 + sockets),
            "filp": (256, 3_000 + sockets),
        },
    )
    aliases = {"signal_cache": ":A-0001152", "UNIX": ":A-0001152", "UNIX-STREAM": ":A-0001152"}
    result = analyse(LeakInput(frame, aliases=aliases))
    [group] = result.groups
    assert group.signature is not None and group.signature.subject == "UNIX sockets"
    [finding] = result.findings
    facts = " ".join(f"{x.name}: {x.value}" for x in finding.facts)
    assert "shown as signal_cache, also holds UNIX, UNIX-STREAM" in facts


def test_a_lone_merged_cache_names_what_else_it_holds() -> None:
    walls, hours = two_hours()
    frame = slab_frame(walls, {"signal_cache": (1152, 150 + 1500 * hours)})
    aliases = {"signal_cache": ":A-0001152", "UNIX": ":A-0001152"}
    [finding] = analyse(LeakInput(frame, aliases=aliases)).findings
    facts = {x.name: x.value for x in finding.facts}
    assert facts["merged caches"] == "shown as signal_cache, also holds UNIX"
    assert "AF_UNIX" in facts["UNIX (merged here) is allocated by"]
    assert "any of them may be the one growing" in finding.summary
