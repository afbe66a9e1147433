"""The condition parser and the suspicious-value rules, each rule on its own example."""

from __future__ import annotations

import pytest

from detectors.vmcore import cexpr
from detectors.vmcore.why import VALUE_RULES, classify_value


@pytest.mark.parametrize(("kind", "example"), [(rule[0], rule[3]) for rule in VALUE_RULES])
def test_every_value_rule_matches_its_example(kind: str, example: int) -> None:
    found = classify_value(example)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize("value", [0, 7 * 0 + 0xFFFF888003A0E508, 0xFFFFFFFF81000000, 0xFFFFFFFFFFFFFFF2])
def test_ordinary_kernel_values_are_not_suspicious(value: int) -> None:
    assert classify_value(value) is None


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (0x6B6B6B6B, "slab-poison-free"),  # a 32-bit member of a freed, poisoned object: not the text "kkkk"
        (0xA56B6B6B, "slab-poison-end"),
        (0x5A5A5A5A, "slab-poison-inuse"),
        (0x6B6B, None),  # two bytes are too few to tell poison from a count
        (0x6B6B6B6B00000000, "non-canonical"),  # poison in the high half only is no 32-bit read
    ],
)
def test_poison_read_as_32_bits_is_poison(value: int, kind: str | None) -> None:
    found = classify_value(value)
    assert (found.kind if found is not None else None) == kind


def test_a_user_address_that_spells_text_is_an_address() -> None:
    """vfs_write's ``const char __user *buf`` = 0x286a5920 reads " Yj(" but is a user-space address."""
    found = classify_value(0x286A5920)
    assert found is not None and found.kind == "user-address"


def test_text_is_decoded() -> None:
    found = classify_value(int.from_bytes(b"kf-clien", "little"))
    assert found is not None and "'kf-clien'" in found.meaning and "text overwrote a pointer" in found.meaning


@pytest.mark.parametrize(
    ("source", "macro", "condition"),
    [
        ("BUG_ON(pool->used >= pool->limit);", "BUG_ON", "pool->used >= pool->limit"),
        ("if (WARN_ON(*state != KF_RUNNING))\t/* x */", "WARN_ON", "*state != KF_RUNNING"),
        ('if (WARN_ONCE(a && b[2].c, "x %d", 1))', "WARN_ONCE", "a && b[2].c"),
        ('CHECK_DATA_CORRUPTION(next == LIST_POISON1, "list_del")', "CHECK_DATA_CORRUPTION", "next == LIST_POISON1"),
    ],
)
def test_assertions_are_found_with_their_condition(source: str, macro: str, condition: str) -> None:
    found = cexpr.find_assertion(source)
    assert found == cexpr.Assertion(macro, condition)


def test_operands_and_evaluation() -> None:
    node = cexpr.parse("pool->used >= pool->limit && !atomic_read(&pool->refs) || x[i].y < 0")
    assert [n.text for n in cexpr.operands(node)] == [
        "pool->used", "pool->limit", "atomic_read(&pool->refs)", "x[i].y",
    ]  # fmt: skip
    values = {"pool->used": 64, "pool->limit": 64, "atomic_read(&pool->refs)": 0}
    assert cexpr.evaluate(node, values) == 1  # x[i].y does not matter once the && holds
    assert cexpr.evaluate(node, {**values, "pool->used": 3}) is None  # now it does, and is unknown
    assert cexpr.evaluate(cexpr.parse("(unsigned long)p == NULL"), {"p": 0}) == 1
    assert cexpr.evaluate(cexpr.parse("next == LIST_POISON1"), {"next": 0xDEAD000000000100}) == 1


def test_text_that_is_no_expression_is_refused() -> None:
    with pytest.raises(cexpr.ParseError):
        cexpr.parse("a ->")


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (0xDEAD4EAD00000000, "spinlock-magic"),  # a debug spinlock_t read at its start: lock word 0, then the magic
        (0xDEAD4EAD00000001, "spinlock-magic"),  # ... locked
        (0xFFFFFFFFDEAD4EAD, "spinlock-magic"),  # read 4 bytes in: the magic, then owner_cpu -1
        (0xDEAD4EAD, "spinlock-magic"),  # the magic read as 32 bits
        (0xDEAF1EED00000000, "rwlock-magic"),
        (0x12345678DEAD4EAD, "non-canonical"),  # the magic under another high half is no lock's words
    ],
)
def test_debug_lock_magics_are_named(value: int, kind: str) -> None:
    found = classify_value(value)
    assert found is not None and found.kind == kind
