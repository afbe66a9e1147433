"""The results of the fleet pipelines (:mod:`forensics.fleet`): what their renderers show.

``kforensic dmesg --signatures``: :class:`SignatureRun` (hosts, fleet groups by signature, the engine).
``kforensic leaks --prometheus``: :class:`FleetLeaks` (instances, the fleet table, the incident).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forensics.model import Finding, Incident, Severity

if TYPE_CHECKING:
    from forensics.types.leaks import LeakAnalysis, LeakThresholds
    from forensics.types.prometheus import InstanceRead

#: The JSON documents of the fleet commands: many hosts' findings, not one machine's incident.
SIGNATURES_SCHEMA = "kforensic.dmesg-signatures/1"
FLEET_LEAKS_SCHEMA = "kforensic.fleet-leaks/1"


@dataclass(frozen=True)
class HostGroup:
    """One signature in one host's log: what the fleet table needs, and one example."""

    signature: str
    title: str
    frame: str | None
    kind: str
    severity: str
    corrupted: bool
    count: int
    kernel: str | None
    first_line: int
    last_line: int
    first_time: float | None  # printk seconds since boot
    last_time: float | None
    first_wall: float | None  # epoch seconds, when the log dates its lines (boot time known)
    last_wall: float | None
    finding: Finding  # the dmesg finding of this group, with its evidence in this host's log


@dataclass(frozen=True)
class HostResult:
    """What one host's log gave (or why it could not be read)."""

    host: str
    path: str
    lines: int = 0
    groups: tuple[HostGroup, ...] = ()
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class FleetGroup:
    """Reports of one signature across hosts."""

    signature: str
    title: str
    frame: str | None
    kind: str
    severity: str
    count: int
    hosts: frozenset[str]
    kernels: frozenset[str]
    first: tuple[Any, ...]  # order key, host, HostGroup: the first seen
    last: tuple[Any, ...]  # the same of the last seen


@dataclass(frozen=True)
class Engine:
    """Where the job ran."""

    kind: str  # serial, local, or the scheduler address
    workers: int
    threads: int


@dataclass(frozen=True)
class SignatureRun:
    """The result of a fleet triage: every host, the fleet groups, where it ran, the incident (one finding a group)."""

    hosts: tuple[HostResult, ...]
    groups: tuple[FleetGroup, ...]
    engine: Engine
    seconds: float
    incident: Incident
    setup_seconds: float = 0.0  # starting (and stopping) the cluster or connecting to it


@dataclass(frozen=True)
class FleetWindow:
    """What was asked of Prometheus: the window, the queries per instance, how many requests."""

    start: float
    end: float
    step: float
    queries: tuple[str, ...]  # per instance, with instance="$instance"
    requests: int
    chosen: str = ""  # how --step auto picked the step ("" when the user gave it)


@dataclass(frozen=True)
class InstanceResult:
    """One instance's analysis, with its findings citing Prometheus."""

    read: InstanceRead
    analysis: LeakAnalysis
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class FleetRow:
    """One flagged series of one instance: a row of the fleet table."""

    instance: str
    series: str
    grade: str
    severity: Severity
    rate: float  # bytes/h
    since: float  # a late rise's last sample at its level before, else the start of its judged part
    confidence: float
    query: str
    first_sample: float
    last_sample: float
    notes: tuple[str, ...]
    why: str = ""  # the verdict's reason (said for the series whose growth is unknown: too few samples to call)


@dataclass(frozen=True)
class FleetLeaks:
    """The result of a fleet run."""

    url: str
    match: str
    fetched: FleetWindow
    results: tuple[InstanceResult, ...]
    rows: tuple[FleetRow, ...]
    incident: Incident
    thresholds: LeakThresholds
    # Series that grow, but over too few samples (or too briefly) to call: unknown, with why; never left unsaid.
    unknown: tuple[FleetRow, ...] = ()
