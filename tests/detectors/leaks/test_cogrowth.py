"""Co-growth: caches growing together in fixed ratios become one finding naming the user action."""

from __future__ import annotations

import numpy as np
import pandas as pd

from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.cogrowth import SIGNATURES, match_signature, moves_together, related
from detectors.leaks.evidence import frame_text, sample_resolver
from detectors.leaks.findings import kb
from forensics.model import LocatorKind, Severity
from forensics.types.leaks import CoGrowth, Share
from tests.detectors.leaks.frames_for_tests import Array, slab_frame, two_hours
from tests.helpers import assert_evidence_resolves


def _udp_leak(dentries_per_socket: float, also: dict[str, tuple[int, Array]] | None = None) -> pd.DataFrame:
    """2,000 UDP sockets an hour for 2 h, each with its inode, dentry, file and a kmalloc-64 object."""
    walls, hours = two_hours()
    sockets = 2000 * hours
    caches = {
        "sock_inode_cache": (832, 100 + sockets),
        "UDP": (1344, 20 + sockets),
        "dentry": (192, 80_000 + dentries_per_socket * sockets),
        "filp": (256, 3_000 + sockets),
        "kmalloc-64": (64, 9_000 + sockets),
    }
    return slab_frame(walls, {**caches, **(also or {})})


def test_a_udp_socket_leak_is_one_finding_naming_the_action() -> None:
    frame = _udp_leak(1.0, {"kmalloc-512": (512, np.full(len(two_hours()[0]), 4_000.0))})
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


def _shares(group: CoGrowth) -> dict[str, Share]:
    return {m.name: group.share(i) for i, m in enumerate(group.members)}


def test_a_shared_cache_counts_in_a_group_only_for_the_part_the_evidence_gives_it() -> None:
    """dentry grows one per leaked socket and as much again for path lookups: the group counted all of it.

    The action makes one dentry per socket (sock_alloc_file): half of dentry's growth is the group's, the rest is
    said not attributed.  kmalloc-64, no known count per socket, beside a steady leak: its share is unknown, out of
    the group's rate.  A socket file's lsm_file_cache blob joins the group (one per socket, a known action's)."""
    # Two dentries per socket: one the socket's, one per socket's worth of lookups.
    frame = _udp_leak(2.0, {"lsm_file_cache": (24, 2_000 + 2000 * two_hours()[1])})
    result = analyse(LeakInput(frame, reclaim_account={"dentry": True}, source="s.sqlite"))
    [group] = result.groups
    assert set(group.names) == {"UDP", "sock_inode_cache", "dentry", "filp", "kmalloc-64", "lsm_file_cache"}
    shares = _shares(group)
    assert shares["dentry"].basis == "count" and abs((shares["dentry"].fraction or 0) - 0.5) < 0.02, shares
    assert shares["filp"] == Share(1.0, "count", "1 per UDP object, as many as the action makes: 1 each")
    assert shares["lsm_file_cache"].fraction == 1.0
    assert shares["kmalloc-64"].fraction is None and "grows steadily" in shares["kmalloc-64"].why
    by_name = {m.name: m for m in group.members}
    whole = sum(m.rate for m in group.members)
    expected = whole - by_name["kmalloc-64"].rate - (1 - (shares["dentry"].fraction or 0)) * by_name["dentry"].rate
    assert abs(group.rate - expected) < 1.0 and group.rate < whole - by_name["dentry"].rate / 3
    assert abs(group.unattributed_rate - (whole - group.rate)) < 1.0
    [finding] = result.findings
    assert f"({kb(group.rate)}/h)" in finding.title
    said = {f.name: f.value for f in finding.facts}
    assert said["growth rate (the group's share)"].startswith(f"{kb(group.rate)}/h attributed to it; not attributed: ")
    assert (
        "dentry " in said["growth rate (the group's share)"]
        and "(grows for other reasons too)" in said["growth rate (the group's share)"]
    )
    assert (
        "kmalloc-64 " in said["growth rate (the group's share)"]
        and "(its share is unknown)" in said["growth rate (the group's share)"]
    )
    assert "the group's share: 50%, " in said["dentry"] and "grow for other reasons, not attributed" in said["dentry"]
    # Reclaimable where unused: only the group's share is held by the sockets.
    assert said["dentry"].startswith("grows in step with the group, its share held by its objects"), said["dentry"]


def test_a_bursty_leak_gives_a_generic_cache_the_share_that_moves_with_it() -> None:
    """Without a known count the timing decides: kmalloc-64 grows one object at each of the socket leak's bursts and
    steadily for others as fast; its increments follow the anchor's for half of its growth."""
    walls, _ = two_hours()
    rng = np.random.default_rng(7)
    sockets = np.cumsum(rng.gamma(0.5, 1.0, len(walls))) * 40  # irregular bursts
    steady = np.linspace(0.0, float(sockets[-1]), len(walls))  # as much again, at an even pace
    frame = slab_frame(
        walls,
        {
            "UDP": (1344, 20 + sockets),
            "sock_inode_cache": (832, 100 + sockets),
            "kmalloc-64": (64, 9_000 + sockets + steady),
        },
    )
    [group] = analyse(LeakInput(frame, source="s.sqlite")).groups
    shares = _shares(group)
    assert shares["kmalloc-64"].basis == "in step", shares
    assert 0.4 < (shares["kmalloc-64"].fraction or 0) < 0.6, shares
    assert "grow at the moments UDP grows" in shares["kmalloc-64"].why


def test_a_shared_anonymous_mapping_leak_counts_its_shmem_inodes_and_files() -> None:
    """Each MAP_SHARED|MAP_ANONYMOUS mapping is a shmem file: one vm_area_struct, shmem inode, file and LSM blob.

    Counted against the anchor alone, the group's rate (and MemAvailable's runway) was a sixth of what grew: the
    shmem inodes and files, one per mapping, were 'share unknown' beside the steady anchor."""
    walls, hours = two_hours()
    maps = 3000 * hours
    frame = slab_frame(
        walls,
        {
            "vm_area_struct": (184, 5_000 + maps),
            "shmem_inode_cache": (752, 900 + maps),
            "filp": (192, 3_000 + maps),
            "lsm_file_cache": (24, 3_000 + maps),
        },
    )
    result = analyse(LeakInput(frame, source="s.sqlite"))
    [group] = result.groups
    assert group.signature is not None and group.signature.subject == "shared memory mappings"
    assert group.names[0] == "vm_area_struct"
    whole = sum(m.rate for m in group.members)
    assert abs(group.rate - whole) < 1.0, (group.rate, whole)
    [finding] = result.findings
    assert f"({kb(whole)}/h)" in finding.title


def test_a_cache_whose_memory_did_not_grow_is_no_member() -> None:
    """kmalloc-128 beside a real UNIX-socket leak: its objects in use rose 0.07 per socket inside slabs it already
    had (num_objs 114,112 at both ends).  It was named in the HIGH title as growing "together" and as explaining
    SUnreclaim, though its slab memory grew 0 KB."""
    frame = _udp_leak(1.0)
    rows = frame["cache"] == "kmalloc-64"
    frame.loc[rows, "num_objs"] = 40_000  # in use 9,000 -> 13,000, inside slabs already allocated
    result = analyse(LeakInput(frame, reclaim_account={"dentry": True}, source="s.sqlite"))
    [group] = result.groups
    assert set(group.names) == {"UDP", "sock_inode_cache", "dentry", "filp"}, group.names
    [finding] = result.findings
    assert "kmalloc-64" not in finding.title


def test_a_late_mapping_leak_is_grouped_over_its_own_episode() -> None:
    """/tmp/ue9 v1.sqlite: 23 min of 5-s samples, 18,000 UNIX sockets held and freed in minutes 4-10, then shared
    anonymous mappings leaked 250/s over the last 2.5 min.  The three leaking caches were judged from the mappings'
    onset, but their co-growth over the store's 58-s windows (3 after the onset): no group, three findings, and the
    shmem inodes and files not counted in the mappings' rate.  Over the episode's own windows they are one leak."""
    interval, n = 5.0, 280
    walls = 1_780_000_000.0 + np.arange(n) * interval
    t = np.arange(n) * interval
    wobble = np.sin(np.arange(n) * 1.7) * 3.0  # others' opens and closes
    sockets = np.clip((t - 240.0) / 300.0, 0.0, 1.0) * 18_000 * (t < 600.0)
    maps = np.clip((t - 1250.0) * 250.0, 0.0, None)
    frame = slab_frame(
        walls,
        {
            "sock_inode_cache": (832, 500 + sockets),
            "signal_cache": (1152, 300 + sockets),
            "vm_area_struct": (184, 60_000 + maps + wobble),
            "shmem_inode_cache": (752, 1_200 + maps),
            "filp": (192, 9_000 + sockets + maps + wobble),
            "lsm_file_cache": (24, 9_000 + sockets + maps),
        },
    )
    result = analyse(LeakInput(frame, source="v.sqlite", aliases={"UNIX": "signal_cache"}))
    mappings = [g for g in result.groups if g.signature is not None and g.signature.subject == "shared memory mappings"]
    assert len(mappings) == 1, [(g.names, g.signature) for g in result.groups]  # was: no group
    [group] = mappings
    assert group.names[0] == "vm_area_struct"
    assert {"shmem_inode_cache", "filp", "lsm_file_cache"} <= set(group.names), group.names
    assert "sock_inode_cache" not in group.names
    whole = sum(m.rate for m in group.members if m.name != "filp")
    assert group.rate > 0.9 * whole, (group.rate, whole)


def _group_onset_and_evidence(frame: pd.DataFrame) -> tuple[str, float]:
    result = analyse(LeakInput(frame, source="s.sqlite"))
    [finding] = [f for f in result.findings if f.kind == "slab-leak-group"]
    [onset] = [x.value for x in finding.facts if x.name == "onset"]
    return onset, min(e.timestamp.seconds for e in finding.evidence if e.timestamp is not None)


def test_a_member_rising_from_the_first_sample_dates_the_group_from_the_store_start() -> None:
    # The UDP-leak workload's shape: UDP grows from sample 1, proc_inode_cache only from a later step.  The group's
    # onset was proc_inode_cache's step ("rose after ... sample 16"): the leak said to begin after it had begun.
    walls, hours = two_hours()
    late = np.where(np.arange(len(walls)) >= 15, 2000 * (hours - hours[15]), 0.0)
    frame = _udp_leak(1.0, {"proc_inode_cache": (720, 1_200 + late)})
    onset, earliest = _group_onset_and_evidence(frame)
    assert onset.startswith("UDP rising from the first sample (before the store began: onset not seen)"), onset
    assert "sample 1)" in onset and "rose after" not in onset
    assert earliest == walls[0]  # the finding (and the report's timeline) starts at the store's first sample


def test_a_group_whose_members_all_rose_late_keeps_the_earliest_onset() -> None:
    walls, hours = two_hours()
    at = 30
    grown = np.where(np.arange(len(walls)) > at, 2000 * (hours - hours[at]), 0.0)
    frame = slab_frame(
        walls, {"UDP": (1344, 20 + grown), "sock_inode_cache": (832, 100 + grown), "filp": (256, 3_000 + grown)}
    )
    onset, earliest = _group_onset_and_evidence(frame)
    assert "rose after" in onset and "first sample" not in onset, onset
    assert earliest > walls[0]
