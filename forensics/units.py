"""Numbers and durations from the command line, checked: one-line errors (exit 2), never a traceback."""

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


def fmt_ms(seconds: float) -> str:
    """Seconds as milliseconds with microsecond precision, e.g. ``8.028 ms``."""
    return f"{seconds * 1e3:.3f} ms"
