"""The attribution table: who allocates each cache, ordered rules, merged-cache aliases."""

from __future__ import annotations

import pytest

from detectors.leaks.attribution import (
    ATTRIBUTIONS,
    attribution_for,
    describe_aliases,
    generic_confirm_steps,
    is_reclaimable,
    merged_names,
)


def _example(pattern: str) -> str:
    return pattern.replace("*", "x") if pattern != "*" else "some_module_cache"


@pytest.mark.parametrize("index", range(len(ATTRIBUTIONS)))
def test_no_rule_is_shadowed_by_an_earlier_one(index: int) -> None:
    rule = ATTRIBUTIONS[index]
    assert attribution_for(_example(rule.pattern)) is rule


@pytest.mark.parametrize(
    ("cache", "words"),
    [
        ("vm_area_struct", "mmap"),
        ("anon_vma_chain", "anonymous"),
        ("dentry", "path lookups"),
        ("ext4_inode_cache", "files"),
        ("filp", "open()"),
        ("sock_inode_cache", "socket"),
        ("TCPv6", "TCP"),
        ("UDP", "UDP"),
        ("UNIX", "AF_UNIX"),
        ("task_struct", "fork"),
        ("pid", "fork"),
        ("cred_jar", "credentials"),
        ("signal_cache", "fork"),
        ("kmalloc-64", "kmalloc"),
        ("kmalloc-cg-1k", "cgroup"),
        ("names_cache", "getname"),
        ("buffer_head", "page cache"),
        ("radix_tree_node", "page cache"),
        ("kf_leak_obj", "created the cache"),
    ],
)
def test_common_caches_are_attributed(cache: str, words: str) -> None:
    assert words in attribution_for(cache).allocated_by


def test_every_rule_says_how_to_confirm_or_relies_on_allocation_traces() -> None:
    for rule in ATTRIBUTIONS:
        assert rule.subject and rule.allocated_by
    steps = " ".join(generic_confirm_steps("kmalloc-64"))
    assert "slub_debug=U,kmalloc-64" in steps
    assert "/sys/kernel/debug/slab/kmalloc-64/alloc_traces" in steps
    assert "slabratetop" in steps and "memleak" in steps


def test_merged_caches_are_named() -> None:
    aliases = {"signal_cache": ":0001088", "UNIX": ":0001088", "pid": ":0000128"}
    assert merged_names("signal_cache", aliases) == ("UNIX",)
    assert describe_aliases("signal_cache", aliases) == "shown as signal_cache, also holds UNIX"
    assert describe_aliases("pid", aliases) is None
    assert describe_aliases("filp", aliases) is None


def test_reclaimable_caches() -> None:
    assert is_reclaimable("dentry", {})
    assert is_reclaimable("ext4_inode_cache", {})
    assert not is_reclaimable("kmalloc-64", {})
    assert is_reclaimable("my_cache", {"my_cache": True})
    assert not is_reclaimable("vm_area_struct", {"vm_area_struct": False})
