"""The dumped kernel's page size: what the dump's memory map, its gaps and its memory users count in."""

from __future__ import annotations

import drgn


def page_size(prog: drgn.Program) -> int:
    """The dumped kernel's page size (4096 when the dump does not say)."""
    try:
        return int(prog["PAGE_SIZE"].value_())
    except (LookupError, ValueError, TypeError):
        return 4096
