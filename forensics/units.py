"""Numbers and durations from the command line, checked: one-line errors (exit 2), never a traceback.

Also the numbers read from a kernel log (:func:`log_dec`, :func:`log_hex`): a kernel prints at most 64 bits.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from forensics.errors import UsageError

if TYPE_CHECKING:
    import datetime as dt


def check_number(
    value: float, what: str, unit: str, low: float = 0.0, high: float = math.inf, *, above: bool = False
) -> float:
    """``value`` when it is finite and in range (``above``: strictly more than ``low``); else UsageError (exit 2).

    The one check behind every duration, rate, threshold and size option
    (``number_option``) and the values parsed from text (``--last 6h``).
    """
    from forensics.errors import UsageError

    if not math.isfinite(value):
        raise UsageError(f"{what} {value} is not a finite number of {unit}", hint=f"give a number of {unit}")
    if value < low or (above and value == low) or value > high:
        bound = f"more than {low:g}" if above else f"at least {low:g}"
        top = f" and at most {high:g}" if math.isfinite(high) else ""
        raise UsageError(f"{what} {value:g} {unit} is out of range: give {bound}{top}", hint=f"in {unit}")
    return value


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")


def parse_duration(text: str, what: str) -> float:
    """Seconds in ``90``, ``90s``, ``30m``, ``2d`` or ``1h30m``; raises UsageError otherwise."""
    spec = text.strip().lower()
    parts = _DURATION.findall(spec)
    if not parts or "".join(n + u for n, u in parts) != spec:
        raise UsageError(f"{what} {text!r} is not a duration", hint="write e.g. 90, 90s, 30m, 24h, 2d or 1h30m")
    from forensics.units import check_number

    return check_number(sum(float(n) * _UNITS[u or "s"] for n, u in parts), what, "seconds")


def human_bytes(value: int) -> str:
    """A byte count (signed) in B, KiB, MiB or GiB, one decimal above bytes."""
    sign = "-" if value < 0 else ""
    size = float(abs(value))
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{sign}{size:.0f} {unit}" if unit == "B" else f"{sign}{size:.1f} {unit}"
        size /= 1024
    return f"{sign}{size:.1f} GiB"


def utc_datetime(wall: float) -> dt.datetime | None:
    """An epoch time as an aware UTC datetime, or None when no calendar date has it.

    Inputs carry such times (a snapshot's ``date=100000000000000000000``, a dump's or a trace's
    clock field gone wrong, a NaN): ``datetime`` raises on them beyond the years 1-9999.
    """
    import datetime as dt

    try:
        return dt.datetime.fromtimestamp(wall, tz=dt.UTC)
    except (OverflowError, ValueError, OSError):
        return None


def iso_utc(wall: float, timespec: str = "seconds") -> str:
    """An epoch time as UTC ISO 8601, to the second; the number itself when no date has it."""
    when = utc_datetime(wall)
    if when is None:
        return f"{wall:.0f} s since the epoch (not a date)"
    return when.isoformat(timespec=timespec)


def iso_local(wall: float) -> str:
    """A wall-clock time of a zone not known (read as if UTC) as printed: ISO 8601 with no offset, and said."""
    when = utc_datetime(wall)
    if when is None:
        return f"{wall:.0f} s since the epoch (not a date)"
    return f"{when.replace(tzinfo=None).isoformat(timespec='seconds')} (local time, zone unknown)"


def first_of(items: list[str], shown: int, sep: str = "; ") -> str:
    """The first ``shown`` of ``items`` joined by ``sep``, and how many more there are when they are cut (a cut
    list says what it left out: "a; b; c ... and 4 more")."""
    more = f" ... and {len(items) - shown:,} more" if len(items) > shown else ""
    return sep.join(items[:shown]) + more


def fmt_ms(seconds: float) -> str:
    """Seconds as milliseconds with microsecond precision, e.g. ``8.028 ms``."""
    return f"{seconds * 1e3:.3f} ms"


#: The largest number a kernel prints (printk's ``%llu``/``%llx``), and the smallest (``%lld``).
U64_MAX = (1 << 64) - 1
S64_MIN = -(1 << 63)


def log_dec(text: str) -> int | None:
    """The decimal number ``text`` (digits, maybe a sign) when it is a 64-bit value a kernel prints, else None.

    A kernel prints at most 20 decimal digits (maybe zero-padded): a longer run is not the field a reader
    looks for, and converting thousands of digits would raise (Python's 4,300-digit limit) or put a number
    in the output no JSON reader takes.  Every reader of log text converts through this or :func:`log_hex`.
    """
    if len(text) > 18:  # up to 18 digits always fit: the check only for longer text
        if len(text.lstrip("+-").lstrip("0")) > 20:
            return None
        value = int(text)
        return value if S64_MIN <= value <= U64_MAX else None
    return int(text)


def past_64_bits(text: str) -> str:
    """Why a field ``text`` (past :func:`log_dec`'s or :func:`log_hex`'s bound) is not read: the reason to give."""
    return f"a number of {len(text)} digits, past the 64 bits a kernel prints"


def log_hex(text: str) -> int | None:
    """The hexadecimal number ``text`` (maybe ``0x`` and a sign) when it has at most 16 digits, else None.

    As :func:`log_dec`: Python converts any length of hex, but a number past 64 bits is not what a kernel
    printed, and the JSON writer refuses it.
    """
    if len(text) > 16:  # up to 16 characters always fit
        digits = text.lstrip("+-")
        if digits[:2] in ("0x", "0X"):
            digits = digits[2:]
        if len(digits.lstrip("0")) > 16:
            return None
    return int(text, 16)
