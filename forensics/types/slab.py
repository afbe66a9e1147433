"""Types of slabinfo/meminfo snapshot imports that the snapshot-input detector reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol


class RejectedLine(NamedTuple):
    """A line of a counter file that was not used: where, what it says, and why."""

    line: int  # 1-based, in the file the text came from
    text: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}: {self.text[:60]!r}"


class SnapshotPlace(Protocol):
    """Where an imported snapshot stands: its file, first line and the text of that line, and its time."""

    @property
    def source(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def head(self) -> str: ...
    @property
    def wall(self) -> float: ...


@dataclass(frozen=True)
class OutOfOrder:
    """A snapshot whose time is earlier than the one before it in the same file (imported sorted by time)."""

    earlier: SnapshotPlace  # the snapshot before it in the file
    later: SnapshotPlace  # the one that goes back in time
