"""UBSAN's messages: the operation a report caught and its values, in words.

lib/ubsan.c prints, after its header, one message per check (``__ubsan_handle_*``): "shift exponent 64 is too large
for 64-bit type 'long unsigned int'", "index 5 is out of range for type 'int [4]'", "9223372036854775807 + 1 cannot
be represented in type 'long long int'".  Since 5.10 the header names the check ("UBSAN: shift-out-of-bounds in
FILE:LINE:COL"); before, it said "UBSAN: Undefined behaviour in FILE:LINE:COL" and an overflow's message began with
its own line ("signed integer overflow:").  :data:`MESSAGES` reads both into the check and the values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from forensics.units import log_dec

#: The header of either format: the check (None in the legacy one) and FILE:LINE[:COL].
UBSAN_HEADER = re.compile(r"UBSAN: (?:Undefined behaviour|([a-z][a-z\-]*)) in (\S+?:\d+(?::\d+)?)\s*$")
_NUMBER = r"(-?\d+|0x[0-9a-f]+)"


def _array(text: str) -> tuple[str, int] | None:
    """An array type's element type and length ("'s8 [257]'" -> ("s8", 257)); None for another type."""
    m = re.fullmatch(r"'(.*?) ?\[(\d+)\]'", text)
    # A length past 64 bits is no array a kernel has (and not read as a number: log_dec).
    length = log_dec(m.group(2)) if m is not None else None
    return (m.group(1), length) if m is not None and length is not None else None


def _index(m: re.Match[str]) -> str:
    index, array = m.group(1), _array(m.group(2))
    if array is None:
        return f"index {index} is out of range for {m.group(2)}"
    element, length = array
    if index.startswith("-"):
        return f"a negative index, {index}, into an array of {length} {element}"
    if length == 0:
        # A zero-length array has no index at all: it is the old-style flexible array (a trailing `T x[0]` member),
        # whose real length is the allocation's, which -fsanitize=bounds cannot know (deprecated.rst, "Zero-length
        # and one-element arrays"): the access is usually inside the object, the declaration what is flagged.
        return (f"index {index} into a zero-length array of {element}: an old-style flexible array (a trailing [0] "
                "member), whose real length UBSAN cannot know: the access may lie inside the allocation")  # fmt: skip
    if length == 1:
        # A one-element array is the other old-style flexible array when it is its struct's last member (the kernel's
        # [1] -> [] conversions, deprecated.rst; -fstrict-flex-arrays=3 bounds it to its one element), an ordinary
        # array otherwise.  The message names the type, not the member's place in its struct, and no source is read.
        return (f"index {index} of a one-element array of {element}: past its declared end (its only index is 0); "
                "if the member is its struct's last, it is an old-style flexible array (a trailing [1] member), "
                "whose real length UBSAN cannot know, and the access may lie inside the allocation: whether it is "
                "the last member is unknown (the log names its type, not its place in the struct)")  # fmt: skip
    return f"index {index} of an array of {length} {element}: past its end (its indexes are 0 to {length - 1})"


def indexed_length(message: str) -> int | None:
    """The declared length of the array an out-of-range index ``message`` names (0 and 1: the old-style flexible
    arrays' lengths); None for another message, or a negative index (past either end whatever the length)."""
    m = MESSAGES[0].pattern.match(message)
    array = _array(m.group(2)) if m is not None and not m.group(1).startswith("-") else None
    return array[1] if array is not None else None


def _bits(m: re.Match[str]) -> str:
    return (f"a shift by {m.group(1)} of a {m.group(2)}-bit {m.group(3)}: the shift count must be below "
            f"{m.group(2)}")  # fmt: skip


class Message(NamedTuple):
    """One of lib/ubsan.c's messages: its check (the new header's word) and its values in words."""

    pattern: re.Pattern[str]
    check: str
    words: Callable[[re.Match[str]], str]


#: lib/ubsan.c's messages, most specific first.
MESSAGES: tuple[Message, ...] = (
    Message(re.compile(rf"^index {_NUMBER} is out of range for type ('.*')"), "array-index-out-of-bounds", _index),
    Message(re.compile(rf"^shift exponent {_NUMBER} is too large for (\d+)-bit type ('.*')"), "shift-out-of-bounds",
            _bits),
    Message(re.compile(rf"^shift exponent {_NUMBER} is negative"), "shift-out-of-bounds",
            lambda m: f"a shift by a negative count, {m.group(1)}"),
    Message(re.compile(rf"^left shift of negative value {_NUMBER}"), "shift-out-of-bounds",
            lambda m: f"a left shift of the negative value {m.group(1)}"),
    Message(re.compile(rf"^left shift of {_NUMBER} by {_NUMBER} places cannot be represented in type ('.*')"),
            "shift-out-of-bounds",
            lambda m: f"{m.group(1)} << {m.group(2)} does not fit in {m.group(3)}: the bits shifted out are lost"),
    Message(re.compile(rf"^{_NUMBER} ([-+*]) {_NUMBER} cannot be represented in type ('.*')"), "integer-overflow",
            lambda m: f"{m.group(1)} {m.group(2)} {m.group(3)} overflows {m.group(4)}: the result does not fit"),
    Message(re.compile(rf"^negation of {_NUMBER} cannot be represented in type ('.*')"), "negation-overflow",
            lambda m: f"-({m.group(1)}) overflows {m.group(2)}: the most negative value has no positive"),
    Message(re.compile(rf"^division of {_NUMBER} by -1 cannot be represented in type ('.*')"), "division-overflow",
            lambda m: f"{m.group(1)} / -1 overflows {m.group(2)}: the most negative value has no positive"),
    Message(re.compile(r"^division by zero"), "division-overflow", lambda m: "a division by zero"),
    Message(re.compile(r"^(.+?) null pointer of type ('.*')"), "null-ptr-deref",
            lambda m: f"{m.group(1)} a NULL pointer of type {m.group(2)}"),
    Message(re.compile(r"^(.+?) misaligned address (\S+) for type ('.*')"), "misaligned-access",
            lambda m: f"{m.group(1)} the misaligned address {m.group(2)} for type {m.group(3)}"),
    Message(re.compile(rf"^load of value {_NUMBER} is not a valid value for type ('.*')"), "invalid-load",
            lambda m: f"the value {m.group(1)} loaded as {m.group(2)}, which has no such value (a bool other than 0 "
            "or 1, an enum out of its range: memory not initialised or overwritten)"),
    Message(re.compile(r"^calling __builtin_unreachable\(\)"), "unreachable",
            lambda m: "code the compiler was told is unreachable was reached"),
)  # fmt: skip

#: The legacy format's first message line of an overflow: its values are on the next line.
OVERFLOW_INTRO = re.compile(r"^(signed|unsigned) integer overflow:\s*$")


class Operation(NamedTuple):
    """The operation a UBSAN report caught: its check and its values in words."""

    check: str
    words: str
    message: Message | None  # None: a message no row reads (said as printed)


def operation(message: str, check: str | None) -> Operation:
    """What a message says (``check``: the header's, None in the legacy format)."""
    for row in MESSAGES:
        if (m := row.pattern.match(message)) is not None:
            return Operation(check or row.check, row.words(m), row)
    return Operation(check or "undefined-behaviour", message, None)
