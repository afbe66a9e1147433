"""A kernel release string (``uname -r``: "6.1.0-18-amd64") read as the version the kernel's layouts and
behaviours are told apart by: its major and minor number (as drgn tells layouts apart by the kernel's version)."""

from __future__ import annotations

import re

_RELEASE = re.compile(r"^(\d+)\.(\d+)")


def release_version(release: str) -> tuple[int, int] | None:
    """``(major, minor)`` of ``release``; None when it does not begin with them ("banana", "v6.6", "6")."""
    m = _RELEASE.match(release)
    return (int(m.group(1)), int(m.group(2))) if m else None
