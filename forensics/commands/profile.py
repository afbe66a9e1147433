"""``kforensic profile``: hotspots of a CPU profile, what they mean, folded stacks and flame graphs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from forensics import __version__
from forensics.commands.common import (
    DebugOption,
    FailOnOption,
    ForceOption,
    FormatOption,
    OutputOption,
    deliver,
    exit_status,
    render_for,
)
from forensics.errors import UsageError
from forensics.model import Clock, Incident, NotAvailable, Timestamp, TimeWindow
from forensics.report import OutputFormat

if TYPE_CHECKING:
    from collectors.perf_script import Frame, Profile, ProfileStack
    from detectors.profile.diff import SymbolDelta
    from detectors.profile.findings import ClassShare
    from detectors.profile.hotspots import Hotspots

SCHEMA = "kforensic.profile/1"

EXAMPLE = """
Example:

  perf record -g -F 999 -p PID -- sleep 30

  kforensic profile perf.data --svg flame.svg

  perf script | kforensic profile - --format json -o profile.json

  kforensic profile new.perf.txt --diff base.perf.txt --svg diff.svg
"""


@dataclass(frozen=True)
class ProfileFilters:
    """Which samples to keep: a time window, a thread, kernel or user frames only."""

    window: tuple[float, float] | None = None
    comm: str | None = None
    pid: int | None = None
    tid: int | None = None
    space: str | None = None  # "kernel", "user" or None for both
    event: str | None = None  # None: the first event, as stackcollapse-perf.pl does


@dataclass(frozen=True)
class ProfileResult:
    """One analysed profile: what was read, the kept stacks, hotspots, classes and findings."""

    profile: Profile
    stacks: list[ProfileStack]
    hot: Hotspots
    classes: list[ClassShare]
    incident: Incident


def parse_window(text: str | None) -> tuple[float, float] | None:
    """``T0:T1`` (seconds on perf's clock; either side may be empty) as a closed interval."""
    if text is None:
        return None
    left, sep, right = text.partition(":")
    try:
        if not sep:
            raise ValueError
        t0 = float(left) if left.strip() else float("-inf")
        t1 = float(right) if right.strip() else float("inf")
    except ValueError:
        raise UsageError(
            f"--window {text!r} is not T0:T1", hint="give seconds as perf script prints them, e.g. --window 120.5:130"
        ) from None
    if any(part.strip() and not math.isfinite(float(part)) for part in (left, right)):
        raise UsageError(
            f"--window {text!r}: nan and inf are not times", hint="give finite seconds, or leave a side empty (120.5:)"
        )
    if t1 < t0:
        raise UsageError(f"--window {text!r} ends before it starts", hint="give T0:T1 with T0 <= T1")
    return (t0, t1)


def analyse_profile(name: str, filters: ProfileFilters = ProfileFilters()) -> ProfileResult:
    """Read one profile input and analyse it (used by this command and by ``kforensic report``)."""
    from collectors.perf_script import read_profile
    from detectors.profile.findings import class_shares, profile_findings
    from detectors.profile.hotspots import compute_hotspots, selected_stacks
    from forensics.errors import InputError

    profile = read_profile(name, filters.window)
    if filters.event is not None and filters.event not in profile.events:
        raise UsageError(
            f"{profile.source} has no samples of event {filters.event!r}",
            hint="its events: " + ", ".join(e for e in profile.events if e),
        )
    if filters.event is not None:
        profile.notes[:] = [n for n in profile.notes if not n.startswith("several events")]
        others = [e for e in profile.events if e and e != filters.event]
        if others:
            profile.notes.append(f"--event {filters.event}: left out {', '.join(others)}")
    stacks = selected_stacks(profile, filters.comm, filters.pid, filters.tid, filters.space, filters.event)
    if not stacks:
        raise InputError(
            f"{profile.source}: no samples left after the filters (--comm/--pid/--tid/--kernel-only/--user-only)",
            hint="check the names and ids in the per-thread table of an unfiltered run",
        )
    hot = compute_hotspots(profile, stacks, event=filters.event)
    classes = class_shares(stacks, hot.total_period)
    findings = profile_findings(profile, stacks, hot, classes)
    window: TimeWindow | NotAvailable = (
        TimeWindow(Timestamp(profile.start, Clock.TRACE), Timestamp(profile.end, Clock.TRACE))
        if profile.start is not None and profile.end is not None
        else NotAvailable("the profile carries no timestamps")
    )
    assert profile.record is not None
    incident = Incident(
        host=NotAvailable("perf script text does not name the host"),
        kernel_release=NotAvailable("perf script text does not name the kernel release"),
        window=window,
        sources=(profile.record,),
        findings=tuple(findings),
        tool_version=__version__,
    )
    return ProfileResult(profile, stacks, hot, classes, incident)


def _frame_kind(kernel: bool, jit: bool, inlined: bool) -> str:
    return "jit" if jit else "inlined" if inlined else "kernel" if kernel else "user"


def svg_stacks(stacks: list[ProfileStack]) -> list[tuple[tuple[tuple[str, str], ...], int]]:
    """Stacks as (name, kind) frames with the command name first, as the folded output has them."""
    # Threads of one command share their frames in the picture.  Stacks are grouped by the identity
    # of their frames tuple first (equal chains share one), so each chain is converted once.
    merged: dict[tuple[str, int], list[Any]] = {}
    for s in stacks:
        key = (s.thread.comm, id(s.frames))
        slot = merged.get(key)
        if slot is None:
            merged[key] = [s.frames, s.period]
        else:
            slot[1] += s.period
    converted: dict[int, tuple[tuple[str, str], ...]] = {}
    out: dict[tuple[tuple[str, str], ...], int] = {}
    # Each distinct frame's (name, kind) is made once; a chain is then one C-level map over its frames.
    pairs: dict[Frame, tuple[str, str]] = {}
    for (comm, ident), (frames, period) in merged.items():
        named = converted.get(ident)
        if named is None:
            try:
                named = tuple(map(pairs.__getitem__, frames))
            except KeyError:  # a frame not met before
                for f in frames:
                    if f not in pairs:
                        pairs[f] = (f.name, _frame_kind(f.kernel, f.jit, f.inlined))
                named = tuple(map(pairs.__getitem__, frames))
            converted[ident] = named
        path = ((comm.replace(" ", "_"), "comm"),) * bool(comm) + named
        out[path] = out.get(path, 0) + period
    return list(out.items())


def render_flamegraph(result: ProfileResult, base: ProfileResult | None = None) -> str:
    """The flame graph SVG (differential against ``base`` when given)."""
    from forensics.report.flamegraph import add_base, build_tree, render_svg

    tree = build_tree(svg_stacks(result.stacks))
    p = result.profile
    unit = "samples" if result.hot.total_period == result.hot.total_samples else "period"
    sub = f"{p.source}: {result.hot.total_samples:,} samples of {result.hot.event or 'the profile'}"
    if base is None:
        return render_svg(tree, "Flame graph", sub, unit)
    scale = result.hot.total_period / base.hot.total_period if base.hot.total_period else 0.0
    add_base(tree, svg_stacks(base.stacks), scale)
    sub += f"; red grew, blue shrank against {base.profile.source}"
    return render_svg(tree, "Differential flame graph", sub, unit, differential=True)


def _pct(x: float) -> str:
    return f"{x:.2f}%"


def _table(title: str, header: list[str], rows: list[list[str]], md: bool) -> str:
    if md:
        out = [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        if not rows:
            out.append("| (none) |" + " |" * (len(header) - 1))
        return "\n".join(out) + "\n\n"
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n\n"


def render_tables(result: ProfileResult, fmt: OutputFormat, top: int, deltas: list[SymbolDelta] | None = None) -> str:
    """The hotspot tables of one profile as text or markdown."""
    md = fmt is OutputFormat.MD
    hot, p = result.hot, result.profile
    span = f", {p.start:.6f}-{p.end:.6f} s" if p.start is not None and p.end is not None else ""
    head = (
        f"{p.source} ({p.kind}): {hot.total_samples:,} samples of {hot.event or 'folded stacks'}, "
        f"period {hot.total_period:,}{span}; kernel {_pct(hot.kernel.share)}, user {_pct(hot.user.share)}\n"
    )
    out = [("# CPU profile\n\n" if md else "") + head + "\n"]
    for note in p.notes:
        out.append(("> " if md else "note: ") + note + "\n")
    if p.notes:
        out.append("\n")
    out.append(
        _table(
            "Hotspots (self)",
            ["self", "samples", "space", "symbol", "dso"],
            [[_pct(r.share), str(r.samples), "k" if r.kernel else "u", r.key, r.dso] for r in hot.self_symbols[:top]],
            md,
        )
    )
    out.append(
        _table(
            "Hotspots (total, with callees)",
            ["total", "samples", "symbol"],
            [[_pct(r.share), str(r.samples), r.key] for r in hot.total_symbols[:top]],
            md,
        )
    )
    out.append(
        _table(
            "What they mean",
            ["share", "samples", "class", "next step"],
            [[_pct(c.share), str(c.samples), c.rule.title, c.rule.next_step] for c in result.classes],
            md,
        )
    )
    if p.kind != "folded":
        out.append(
            _table(
                "Per DSO (self)",
                ["self", "samples", "dso"],
                [[_pct(r.share), str(r.samples), r.key] for r in hot.dsos[:top]],
                md,
            )
        )
        out.append(
            _table(
                "Per thread",
                ["share", "samples", "thread"],
                [[_pct(r.share), str(r.samples), r.key] for r in hot.threads[:top]],
                md,
            )
        )
    rows = []
    for sym, paths in hot.paths.items():
        for cp in paths:
            chain = " <- ".join(reversed(cp.frames[-8:])) + (" <- .." if len(cp.frames) > 8 else "")
            rows.append([_pct(cp.share), sym, chain, f"line {cp.first_line}"])
    out.append(
        _table("Call paths to the top hotspots", ["share", "hotspot", "path (leaf first)", "first sample"], rows, md)
    )
    if deltas is not None:
        out.append(
            _table(
                "Difference against the base (self share)",
                ["change", "base", "new", "symbol"],
                [[f"{d.delta:+.2f}", _pct(d.base), _pct(d.new), d.symbol] for d in deltas],
                md,
            )
        )
    return "".join(out)


def _shares(rows: Any, n: int, extra: bool = False) -> list[dict[str, Any]]:
    out = []
    for r in rows[:n]:
        d: dict[str, Any] = {"name": r.key, "pct": round(r.share, 2), "samples": r.samples}
        if extra:
            d["space"] = "kernel" if r.kernel else "user"
            if r.dso:
                d["dso"] = r.dso
        out.append(d)
    return out


def to_document(result: ProfileResult, deltas: list[SymbolDelta] | None, budget: int, top: int = 15) -> dict[str, Any]:
    """The ``kforensic.profile/1`` JSON digest, cut until it fits in ``budget`` bytes."""
    from dataclasses import replace

    from forensics.output import encode_text
    from forensics.serialize import incident_to_dict

    hot, p = result.hot, result.profile
    ranked = result.incident.sorted_findings()
    kept = len(ranked)
    incident = incident_to_dict(result.incident)
    n = top
    while True:
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "tool_version": __version__,
            "source": p.source,
            "input": p.kind,
            "event": hot.event,
            "samples": hot.total_samples,
            "period": hot.total_period,
            "span": [p.start, p.end] if p.start is not None else None,
            "notes": p.notes,
            "kernel_pct": round(hot.kernel.share, 2),
            "user_pct": round(hot.user.share, 2),
            "self": _shares(hot.self_symbols, n, extra=True),
            "total": _shares(hot.total_symbols, n),
            "dsos": _shares(hot.dsos, max(1, n // 3)),
            "threads": _shares(hot.threads, max(1, n // 3)),
            "classes": [
                {"class": c.rule.name, "pct": round(c.share, 2), "samples": c.samples, "next": c.rule.next_step}
                for c in result.classes[: max(1, n)]
            ],
            "paths": {
                sym: [
                    {"pct": round(cp.share, 2), "stack": list(cp.frames[-10:]), "line": cp.first_line}
                    for cp in cps[: max(1, n // 5)]
                ]
                for sym, cps in list(hot.paths.items())[: max(1, n // 3)]
            },
        }
        if deltas is not None:
            doc["diff"] = [
                {
                    "name": d.symbol,
                    "base_pct": round(d.base, 2),
                    "new_pct": round(d.new, 2),
                    "change": round(d.delta, 2),
                }
                for d in deltas[:n]
            ]
        if kept < len(ranked):
            doc["findings_cut"] = f"{len(ranked) - kept} of {len(ranked)} findings left out to fit {budget} bytes"
        doc["incident"] = incident
        # Sized as deliver() writes it: a byte perf could not decode (a surrogate escape) as \udcXX.
        size = len(encode_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))))
        if size + 1 <= budget or (n == 0 and kept == 0):  # + the final newline
            return doc
        # Cut the tables to their top 3 rows, then the least severe findings but one, then the rest.
        if n > 3 or (n > 0 and kept <= 1):
            n -= 1 if n <= 5 else max(1, n // 4)
        else:
            kept -= 1
            incident = incident_to_dict(replace(result.incident, findings=ranked[:kept]))


def profile(
    source: Annotated[
        str,
        typer.Argument(
            help="perf.data, `perf script` output or folded stacks (may be gzip, xz or zstd); '-' for stdin."
        ),
    ],
    window: Annotated[
        str | None,
        typer.Option("--window", help="Only samples with T0 <= time <= T1 (perf's seconds).", metavar="T0:T1"),
    ] = None,
    comm: Annotated[
        str | None, typer.Option("--comm", help="Only samples of this command name.", metavar="NAME")
    ] = None,
    pid: Annotated[int | None, typer.Option("--pid", help="Only samples of this process id.", metavar="PID")] = None,
    tid: Annotated[int | None, typer.Option("--tid", help="Only samples of this thread id.", metavar="TID")] = None,
    event: Annotated[
        str | None,
        typer.Option(
            "--event", help="Which event to analyse when there are several (default: the first).", metavar="NAME"
        ),
    ] = None,
    kernel_only: Annotated[bool, typer.Option("--kernel-only", help="Keep only kernel frames.")] = False,
    user_only: Annotated[bool, typer.Option("--user-only", help="Keep only user-space frames.")] = False,
    svg: Annotated[
        Path | None, typer.Option("--svg", help="Write an interactive flame graph SVG.", metavar="FILE")
    ] = None,
    folded: Annotated[
        Path | None,
        typer.Option("--folded", help="Write folded stacks (stackcollapse-perf.pl format).", metavar="FILE"),
    ] = None,
    diff: Annotated[
        str | None,
        typer.Option(
            "--diff", help="A base profile: add a difference table and make --svg differential.", metavar="BASE"
        ),
    ] = None,
    top: Annotated[int, typer.Option("--top", help="Rows per table.", min=1, metavar="N")] = 15,
    digest_bytes: Annotated[
        int,
        typer.Option(
            "--digest-bytes", help="Size bound of the JSON digest (--format json).", min=1024, metavar="BYTES"
        ),
    ] = 8192,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Find the hotspots of a CPU profile (perf), say what they mean, and draw flame graphs."""
    from forensics.output import write_atomic

    if kernel_only and user_only:
        raise UsageError("--kernel-only and --user-only exclude each other", hint="give one of them")
    filters = ProfileFilters(
        parse_window(window), comm, pid, tid, "kernel" if kernel_only else "user" if user_only else None, event
    )
    result = analyse_profile(source, filters)
    base = deltas = None
    if diff is not None:
        from detectors.profile.diff import diff_hotspots

        base = analyse_profile(diff, filters)
        deltas = diff_hotspots(base.hot, result.hot, top)
    if folded is not None:
        from detectors.profile.hotspots import folded_lines

        write_atomic(folded, "".join(line + "\n" for line in folded_lines(result.stacks)))
    if svg is not None:
        write_atomic(svg, render_flamegraph(result, base))
    if fmt is OutputFormat.JSON:
        text = (
            json.dumps(to_document(result, deltas, digest_bytes, top), ensure_ascii=False, separators=(",", ":")) + "\n"
        )
    else:
        text = render_tables(result, fmt, top, deltas) + render_for(result.incident, fmt, output)
    deliver(text, output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("profile", epilog=EXAMPLE, help=f"{profile.__doc__}")(profile)
