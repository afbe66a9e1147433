"""The base skip list, matched in parts for speed (plain text by an automaton, anchored text by startswith and
endswith, the rest as regexes), says what its regex alternation says; so do the stall anchors' parts."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

from detectors.dmesg.frames import BASE_SKIP, STALL_ANCHORS, _branches, _stall_anchor, _stall_split, is_skipped

ROOT = Path(__file__).resolve().parents[3]
_FUNCTION = re.compile(r"([A-Za-z_][A-Za-z0-9_.$]*)\+0x")


def _names() -> set[str]:
    """Every frame function of the golden logs and fixture consoles, variants of each pattern, random names."""
    logs = [*(ROOT / "tests" / "detectors" / "dmesg" / "golden").glob("*.log")]
    logs += (ROOT / "vmcore_fixtures").glob("**/console.log")
    names = {name for log in logs for name in _FUNCTION.findall(log.read_text(errors="replace"))}
    for pattern in BASE_SKIP:
        text = pattern.strip("^$")
        names.update({text, "_" + text, "__" + text, text + "_x", "x" + text, text.replace("_*", ""),
                      text.replace("_*", "__"), text.replace("?", "")})  # fmt: skip
    rng = random.Random(28)
    names.update(
        "".join(rng.choice(string.ascii_lowercase + "_") for _ in range(rng.randint(1, 20))) for _ in range(3000)
    )
    return names


def test_the_split_list_agrees_with_the_alternation() -> None:
    alternation = re.compile("|".join(f"(?:{p})" for p in BASE_SKIP))
    names = _names()
    differ = sorted(n for n in names if (alternation.search(n) is not None) != is_skipped((), n))
    assert not differ, differ[:20]
    # The check is not vacuous: both answers occur, for names of every kind of pattern.
    skipped = [n for n in names if is_skipped((), n)]
    assert skipped and len(skipped) < len(names)
    assert is_skipped((), "kasan_report")  # plain text, anywhere
    assert is_skipped((), "__queue_work")  # a ^-anchored regex
    assert is_skipped((), "read_lock_bh")  # an unanchored regex
    assert not is_skipped((), "ext4_fill_super")


def test_a_rule_extra_still_counts() -> None:
    assert not is_skipped((), "my_driver_probe")
    assert is_skipped(("^my_driver_",), "my_driver_probe")


def test_the_stall_anchors_parts_agree_with_the_alternation() -> None:
    branches = _branches(STALL_ANCHORS.pattern)
    assert "|".join(branches) == STALL_ANCHORS.pattern and len(branches) > 60
    split = _stall_split()
    assert split.at_start is not None and split.other is None  # every branch is plain text or ^-anchored now
    names = _names()
    for branch in branches:
        for text in {branch.strip("^$"), "sys_connect", "__x64_sys_ioctl", "compat_SyS_socketpair", "socketpair"}:
            names.update({text, "_" + text, text + "_x", "x" + text, text + "$"})
    differ = sorted(n for n in names if (STALL_ANCHORS.search(n) is not None) != _stall_anchor(n))
    assert not differ, differ[:20]
    # Both answers occur, for each kind of branch.
    assert _stall_anchor("process_one_work") and _stall_anchor("x_do_syscall_64")  # plain text, anywhere
    assert _stall_anchor("kthread") and not _stall_anchor("kthread_x") and not _stall_anchor("x_kthread")  # ^...$
    assert _stall_anchor("__x64_sys_connect") and not _stall_anchor("x__x64_sys_connect")  # ^ and groups
    assert not _stall_anchor("ext4_fill_super")
