"""Why UBSAN stopped: the operation it caught and its values, in both of lib/ubsan.c's formats.

The syzkaller corpus's 5 UBSAN reports (4 of them the pre-5.10 "UBSAN: Undefined behaviour in FILE:LINE:COL" format)
had no why, although each prints the operation with its values: "index 6380 is out of range for type 's8 [257]'" is
an index past an array of 257, "shift exponent 1275068428 is too large for 32-bit type 'int'" a shift by more than
the type's width.  The logs are written as lib/ubsan.c prints them; the legacy format's overflow prints its values
on the line after "signed integer overflow:".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.ubsan import operation
from tests.detectors.dmesg.why_logs import offset, only_report_why

HEADER = "UBSAN: "
_RULE = "[   40.100000] " + "=" * 80 + "\n"

LEGACY_SHIFT = (
    _RULE
    + """\
[   40.100100] UBSAN: Undefined behaviour in net/sched/sch_cbq.c:1047:25
[   40.100200] shift exponent 64 is too large for 64-bit type 'long unsigned int'
[   40.100300] CPU: 0 PID: 7061 Comm: syz-executor2 Not tainted 4.14.0 #1
[   40.100400] Call Trace:
[   40.100500]  dump_stack+0x8b/0xb0
[   40.100600]  ubsan_epilogue+0xd/0x40
[   40.100700]  __ubsan_handle_shift_out_of_bounds+0x1ea/0x260
[   40.100800]  cbq_normalize_quanta+0x2c1/0x3d0
[   40.100900]  cbq_change_class+0x8e1/0x1820
"""
)

LEGACY_OVERFLOW = (
    _RULE
    + """\
[   40.100100] UBSAN: Undefined behaviour in kernel/time/hrtimer.c:310:16
[   40.100200] signed integer overflow:
[   40.100300] 9223372036854775807 + 1 cannot be represented in type 'long long int'
[   40.100400] CPU: 1 PID: 8112 Comm: syz-executor5 Not tainted 4.15.0 #2
[   40.100500] Call Trace:
[   40.100600]  dump_stack+0x8b/0xb0
[   40.100700]  ubsan_epilogue+0xd/0x40
[   40.100800]  handle_overflow+0x1bb/0x1f0
[   40.100900]  __ubsan_handle_add_overflow+0x11/0x20
[   40.101000]  ktime_add_safe+0xa2/0xc0
[   40.101100]  hrtimer_nanosleep+0x1d3/0x400
"""
)

NEW_INDEX = (
    _RULE.replace("]", "][T13309]", 1)
    + """\
[  175.968362][T13309] UBSAN: array-index-out-of-bounds in arch/x86/kernel/uprobes.c:263:56
[  175.969802][T13309] index 4 is out of range for type 'insn_byte_t [4]'
[  175.970958][T13309] CPU: 2 PID: 13309 Comm: syz-executor.3 Not tainted 5.9.0 #36
[  175.971000][T13309] Call Trace:
[  175.971100][T13309]  dump_stack+0x8b/0xb0
[  175.971200][T13309]  ubsan_epilogue+0xd/0x40
[  175.971300][T13309]  __ubsan_handle_out_of_bounds.cold+0x62/0x6c
[  175.971400][T13309]  arch_uprobe_analyze_insn+0x9d3/0xa00
[  175.971500][T13309]  uprobe_register+0x8a4/0xc00
"""
)


@pytest.mark.parametrize(
    ("text", "title", "cls", "statement", "operation_line"),
    [
        (
            LEGACY_SHIFT,
            "UBSAN: undefined-behaviour in cbq_normalize_quanta",
            "undefined_behaviour",
            "shift-out-of-bounds in cbq_normalize_quanta at net/sched/sch_cbq.c:1047:25: a shift by 64 of a 64-bit "
            "'long unsigned int': the shift count must be below 64",
            "shift exponent",
        ),
        (
            LEGACY_OVERFLOW,
            "UBSAN: undefined-behaviour in ktime_add_safe",
            "undefined_behaviour",
            "integer-overflow in ktime_add_safe at kernel/time/hrtimer.c:310:16: 9223372036854775807 + 1 overflows "
            "'long long int': the result does not fit",
            "cannot be represented",
        ),
        (
            NEW_INDEX,
            "UBSAN: array-index-out-of-bounds in arch_uprobe_analyze_insn",
            "out_of_bounds",
            "array-index-out-of-bounds in arch_uprobe_analyze_insn at arch/x86/kernel/uprobes.c:263:56: index 4 of an "
            "array of 4 insn_byte_t: past its end (its indexes are 0 to 3)",
            "index 4",
        ),
    ],
    ids=["legacy-shift", "legacy-overflow", "new-index"],
)
def test_the_why_names_the_operation_and_its_values(
    tmp_path: Path, text: str, title: str, cls: str, statement: str, operation_line: str
) -> None:
    said, why = only_report_why(tmp_path, text)
    assert said == title
    assert why.cls == "ubsan"
    assert why.cause is not None and (why.cause.cls, why.cause.statement) == (cls, statement)
    assert why.fact_at("UBSAN operation") == offset(text, HEADER, operation_line)
    assert why.fact_at("UBSAN at") == 0
    assert why.cause_at == (offset(text, HEADER, operation_line),)


def test_an_index_into_a_zero_length_array_is_said_to_be_an_old_style_flexible_array(tmp_path: Path) -> None:
    """ue10 5: "index 3 is out of range for type '__u32 [0]'" was "past its end (its indexes are 0 to -1)"; a [0]
    member is the old fake flexible array, whose real length is the allocation's, which UBSAN cannot know."""
    text = NEW_INDEX.replace("index 4 is out of range for type 'insn_byte_t [4]'", "index 3 is out of range for type "
                             "'__u32 [0]'")  # fmt: skip
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.cls == "out_of_bounds" and why.cause.confidence == 0.5
    assert why.cause.statement.endswith(
        ": index 3 into a zero-length array of __u32: an old-style flexible array (a trailing [0] member), whose real "
        "length UBSAN cannot know: the access may lie inside the allocation"
    )
    assert "past its end" not in why.cause.statement and "0 to -1" not in why.cause.statement
    assert "flexible array member ([])" in why.cause.next_command


def test_an_index_past_a_one_element_array_names_the_other_old_style_flexible_array(tmp_path: Path) -> None:
    """A trailing [1] member is the other old-style flexible array (the kernel's [1] -> [] conversions,
    -fstrict-flex-arrays=3 checks it against its one element); it was "past its end (its indexes are 0 to 0)", as
    an ordinary array.  Whether this one is its struct's last member the message does not say: unknown."""
    text = NEW_INDEX.replace("index 4 is out of range for type 'insn_byte_t [4]'", "index 2 is out of range for type "
                             "'struct ieee80211_channel *[1]'")  # fmt: skip
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.cls == "out_of_bounds" and why.cause.confidence == 0.5
    assert why.cause.statement.endswith(
        ": index 2 of a one-element array of struct ieee80211_channel *: past its declared end (its only index is "
        "0); if the member is its struct's last, it is an old-style flexible array (a trailing [1] member), whose "
        "real length UBSAN cannot know, and the access may lie inside the allocation: whether it is the last member "
        "is unknown (the log names its type, not its place in the struct)"
    )
    assert "0 to 0" not in why.cause.statement
    assert why.cause.next_command.startswith("read the array's declaration (the index at arch/x86/kernel/uprobes.c")
    assert "flexible array member ([])" in why.cause.next_command and "its one element" in why.cause.next_command


def test_a_negative_index_into_a_one_element_array_is_not_a_flexible_array(tmp_path: Path) -> None:
    text = NEW_INDEX.replace("index 4 is out of range for type 'insn_byte_t [4]'", "index -1 is out of range for "
                             "type 'u8 [1]'")  # fmt: skip
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None and why.cause.confidence == 0.8
    assert why.cause.statement.endswith(": a negative index, -1, into an array of 1 u8")


def test_a_legacy_overflow_cut_after_its_first_line_says_its_values_are_missing(tmp_path: Path) -> None:
    text = LEGACY_OVERFLOW.replace(
        "[   40.100300] 9223372036854775807 + 1 cannot be represented in type 'long long int'\n", ""
    )
    _, why = only_report_why(tmp_path, text)
    assert why.cause is not None
    assert why.cause.statement.endswith(
        "kernel/time/hrtimer.c:310:16: signed integer overflow (its values are not in the log)"
    )


@pytest.mark.parametrize(
    ("message", "check", "words"),
    [
        ("index -1 is out of range for type 'u32 [8]'", "array-index-out-of-bounds",
         "a negative index, -1, into an array of 8 u32"),
        ("shift exponent -1 is negative", "shift-out-of-bounds", "a shift by a negative count, -1"),
        ("left shift of 1 by 31 places cannot be represented in type 'int'", "shift-out-of-bounds",
         "1 << 31 does not fit in 'int': the bits shifted out are lost"),
        ("-2147483648 * -1 cannot be represented in type 'int'", "integer-overflow",
         "-2147483648 * -1 overflows 'int': the result does not fit"),
        ("division by zero", "division-overflow", "a division by zero"),
        ("load of value 2 is not a valid value for type '_Bool'", "invalid-load",
         "the value 2 loaded as '_Bool', which has no such value (a bool other than 0 or 1, an enum out of its range: "
         "memory not initialised or overwritten)"),
        ("member access within null pointer of type 'struct sock'", "null-ptr-deref",
         "member access within a NULL pointer of type 'struct sock'"),
        ("something new", "undefined-behaviour", "something new"),
    ],
)  # fmt: skip
def test_each_message_is_read_into_its_check_and_words(message: str, check: str, words: str) -> None:
    assert operation(message, None)[:2] == (check, words)


def test_the_new_headers_check_is_kept() -> None:
    assert operation("index 4 is out of range for type 'int [4]'", "array-index-out-of-bounds").check == (
        "array-index-out-of-bounds"
    )
