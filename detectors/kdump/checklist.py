"""The kdump readiness checklist: will the next crash of this system leave a vmcore?

Each rule of :data:`RULES` looks at the :class:`KdumpState` and returns check
lines (pass / warn / fail) that say what was seen, why it matters and how to
fix it, with evidence cited from the files read.  A ``fail`` means the next
crash will not be captured; ``warn`` that it may be captured but something
will hurt (too small a reservation, hangs that never panic, no debug info).
Pure: no file access, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from collectors.kdump.snapshot import KdumpState
from detectors.kdump.context import active_config, collector_options, crashkernel_estimate
from detectors.kdump.crashkernel import Estimate
from detectors.kdump.kernel_rules import check_boot_config, check_cmdline, check_distro, check_loaded, check_reservation
from detectors.kdump.service_rules import (
    check_collector,
    check_config,
    check_debuginfo,
    check_read_problems,
    check_service,
    check_space,
    check_tooling,
)
from detectors.kdump.sysctl_rules import check_sysctls
from detectors.kdump.util import Line, Status

__all__ = ["RULES", "Checklist", "Line", "Status", "active_config", "collector_options", "run_checklist"]


@dataclass(frozen=True)
class Checklist:
    """All check lines, the verdicts and the crashkernel estimate."""

    lines: tuple[Line, ...]
    estimate: Estimate

    @property
    def ready(self) -> bool:
        """True when nothing fails: the next crash will be captured."""
        return all(line.status is not Status.FAIL for line in self.lines)

    @property
    def kernel_ready(self) -> bool:
        """True when the kernel side alone is ready (reservation made, crash kernel loaded)."""
        return all(line.status is not Status.FAIL for line in self.lines if line.kernel_side)

    def count(self, status: Status) -> int:
        """How many lines have ``status``."""
        return sum(1 for line in self.lines if line.status is status)


RULES: tuple[Callable[[KdumpState, Estimate], list[Line]], ...] = (
    check_distro,
    check_cmdline,
    check_boot_config,
    check_reservation,
    check_loaded,
    check_tooling,
    check_config,
    check_service,
    check_space,
    check_collector,
    check_sysctls,
    check_debuginfo,
    check_read_problems,
)


def run_checklist(state: KdumpState) -> Checklist:
    """Run every rule over the state."""
    estimate = crashkernel_estimate(state)
    lines = [line for rule in RULES for line in rule(state, estimate)]
    return Checklist(tuple(lines), estimate)
