"""The typed results of the pipelines: what each command renders and ``report`` nests.

One class per subject.  A result holds the detectors' own outputs and the
incident built from them; renderers (:mod:`forensics.report`) read results and
never run an analysis.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.model import Incident, NotAvailable
from forensics.types.dmesg_result import DmesgResult  # a module of its own: see there
from forensics.types.profile_result import ProfileResult
from forensics.types.trace_result import TraceResult  # a module of its own, as dmesg's: see there

if TYPE_CHECKING:
    from forensics.types.dmesg import KernelReport
    from forensics.types.figures import Figure
    from forensics.types.incident import Correlation, Hypothesis, Lane, TimelineEvent
    from forensics.types.kdump import AppliedChange, Checklist, KdumpState, Plan
    from forensics.types.leaks import LeakAnalysis, LeakThresholds
    from forensics.types.slab import CounterPoint, SampleRow, StoreSummary
    from forensics.types.vmcore import CrashSnapshot, FaultAnalysis, Taint, VmcoreAnalysis


@dataclasses.dataclass(frozen=True)
class LeaksResult:
    """A finished leak analysis of a store, ready to render."""

    store: Path
    run_id: int | None
    analysis: LeakAnalysis
    thresholds: LeakThresholds
    incident: Incident
    plots: tuple[Plot, ...]
    figures: tuple[Figure, ...] = ()  # the plots to draw and write (forensics/delivery.py)


@dataclass(frozen=True)
class VmcoreResult:
    """Everything ``kforensic vmcore`` shows."""

    snapshot: CrashSnapshot
    analysis: VmcoreAnalysis
    fault: FaultAnalysis | NotAvailable
    reports: tuple[KernelReport, ...]
    incident: Incident
    dmesg_path: str | None
    taint: Taint | NotAvailable  # the snapshot's taint mask decoded
    dmesg_not_used: str = ""  # why a log found beside the dump was not read (not the dump's log); "" if none


#: What of a dump only the kernel's debug info reads: "unknown" in a report of its kernel log alone (DumpLogResult).
NEEDS_DEBUG_INFO = "registers, the faulting instruction, structures and their NULL members, locks, tasks, memory"


@dataclass(frozen=True)
class LogBeside:
    """The kernel log found beside the dump (``dmesg.<stamp>``, ``vmcore-dmesg.txt``, ``dmesg.txt``): the findings
    cite its lines by its path.

    ``checked``: how it was found to be the dump's own log (its last records are those makedumpfile reads from the
    dump, :mod:`forensics.vmcore.logcheck`); ``unchecked``: why that could not be checked (the log is then used as
    found, and said to be unchecked).  One of the two is set.
    """

    path: str
    checked: str = ""
    unchecked: str = ""


@dataclass(frozen=True)
class LogExtracted:
    """The kernel log makedumpfile extracted from the dump for the run, into a temporary file since deleted.

    ``command`` writes the same text again (``FILE``: the file it writes); the findings cite its lines as lines of
    ``cited`` (that command in angle brackets, as ``<stdin>`` is cited), and the source record holds its sha256.
    """

    command: tuple[str, ...]
    # Why the log found beside the dump was not read instead, one line ("dmesg.txt beside the dump is not this dump's
    # log: its last record ... is not in the dump's log ..."); "" when none was found.
    not_used: str = ""

    @property
    def shell(self) -> str:
        """The command as a shell line."""
        import shlex

        return shlex.join(self.command)

    @property
    def cited(self) -> str:
        """The source name the findings' evidence gives."""
        return f"<{self.shell}>"


@dataclass(frozen=True)
class DumpLogResult:
    """``kforensic vmcore`` without the kernel's debug info: the dump's own kernel log, read as ``kforensic dmesg``
    reads a log (its reports, why, hypotheses), and why the dump itself was not analysed.

    ``analysis`` says why the dump's state (registers, structures, locks, tasks, memory) is unknown: the debug-info
    error; ``full_analysis`` how to get it (where the debug info is had).  ``dmesg.incident`` is the incident, the
    dump among its sources.
    """

    dump: str
    analysis: NotAvailable
    full_analysis: str
    log: LogBeside | LogExtracted
    dmesg: DmesgResult
    warnings: tuple[str, ...] = ()  # how the dump was chosen among several (the full analysis' first warning)

    @property
    def incident(self) -> Incident:
        """The incident of the log's findings (what the exit status is judged on)."""
        return self.dmesg.incident


@dataclass(frozen=True)
class KdumpSetup:
    """``kforensic kdump setup``: the check it planned from, the plan, what was applied and run.

    ``applied`` is None when the plan was only printed; ``ran`` pairs each command run with its exit status.
    """

    check: KdumpCheck
    plan: Plan
    applied: tuple[AppliedChange, ...] | None
    ran: tuple[tuple[tuple[str, ...], int], ...]


@dataclass(frozen=True)
class KdumpCheck:
    """``kforensic kdump check``: the state read, the checklist run on it and the incident of its findings."""

    state: KdumpState
    checklist: Checklist
    incident: Incident


@dataclass(frozen=True)
class Plot:
    """A leak plot the result shows: the series it shows and where it is written."""

    name: str  # cache or meminfo field
    kind: str  # "cache" or "meminfo"
    path: Path


@dataclass(frozen=True)
class StoreExport:
    """``slab-export --format prometheus``: the samples to export, their slab rows and their meminfo series."""

    store: Path
    samples: tuple[SampleRow, ...]  # every sample of the run (or store), oldest first
    exported: frozenset[int]  # the ids of the samples exported: the last, or all with --all-samples
    timestamps: bool  # each value with its sample's time (--all-samples)
    slab_rows: tuple[tuple[object, ...], ...]  # the exported samples' slab rows (SlabStore.iter_slab_rows)
    meminfo: tuple[tuple[str, str, tuple[CounterPoint, ...]], ...]  # (field, unit, the exported samples' points)


@dataclass(frozen=True)
class RunReport:
    """What a run (or a store) comes to: the summary and any findings of the leak analysis."""

    store: Path
    run_id: int | None
    summary: StoreSummary
    incident: Incident
    analysis: str  # what became of the leak analysis, one line
    # The analysis raised an error of kforensic's own (a bug): the run ends with exit 4 (ExitCode.INTERNAL) once its
    # summary is written, not 0 as if it had judged the store (the samples are safe either way).
    analysis_failed: bool = False


# ---------------------------------------------------------------- kforensic report

#: What ``report`` shows of one input: the result its own command renders.
SourceDetails = VmcoreResult | DumpLogResult | DmesgResult | LeaksResult | TraceResult | ProfileResult


@dataclass(frozen=True)
class SourceAnalysis:
    """One input of ``kforensic report``, analysed by its own command's pipeline, ready to merge."""

    incident: Incident
    title: str  # the heading the report nests the details under
    details: SourceDetails  # rendered as its command's document (forensics/report/story.py)
    plots: tuple[tuple[str, Path], ...]  # (caption, path) of the plots the report shows
    command: str  # the command line that reproduces it
    figures: tuple[Figure, ...] = ()  # the plots to draw and write (forensics/delivery.py)


@dataclass(frozen=True)
class IncidentStory:
    """Everything the incident report shows: the merged incident, correlated, timed and ranked."""

    incident: Incident  # merged and correlated
    summary: str  # the first sentence, for non-kernel engineers
    timeline: tuple[TimelineEvent, ...]
    lanes: tuple[Lane, ...]  # the timeline's clocks, the inputs that cannot belong to the crashed boot flagged
    narrative: tuple[str, ...]  # the timeline told in short sentences
    story: tuple[str, ...]  # the verdict when a finding is a problem: the summary, then the narrative
    correlations: tuple[Correlation, ...]
    hypotheses: tuple[Hypothesis, ...]
    details: tuple[SourceAnalysis, ...]  # each input, its details nested under its title
    plots: tuple[tuple[str, Path], ...]  # (caption, where the PNG is written)
    commands: tuple[str, ...]  # commands that reproduce the analysis
    # The findings of inputs set apart (another boot, host or release): listed in a lane of their own, never ranked
    # with the crash's findings nor counted by --fail-on.
    apart: frozenset[str] = frozenset()
    # Why each of them is set apart, by finding id ("its boot's command line is not the dump's: ..."): the JSON
    # documents and the digest say it beside the finding.
    apart_why: tuple[tuple[str, str], ...] = ()
    crashed: bool = True  # whether an input of the boot told shows a crash ("the crashed boot", else "the boot")
    # A kdump check's readiness findings in one sentence, said after the story ("" without, or when the summary is it):
    # a readiness gap is no event of the boot told, nor counted among its problems (detectors/incident/readiness.py).
    readiness: str = ""
