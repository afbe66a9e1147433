"""``kforensic profile`` rendered: hotspot tables, the flame graph, ``kforensic.profile/1``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forensics import __version__
from forensics.model import perf_sample_said
from forensics.report.formats import Destination, IncidentRenderer
from forensics.types.profile import periods_by_command, sample_at
from forensics.types.profile_result import ProfileResult

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from forensics.report.document import Document
    from forensics.report.flamegraph import Node
    from forensics.types.profile import CallPath, Profile, ProfileFrame, ProfileStack, SymbolDelta


SCHEMA = "kforensic.profile/1"


#: The space column of the self table: kernel, user, or "?" for samples without a frame (no space).
_SPACE = {True: "k", False: "u", None: "?"}


def _frame_kind(kernel: bool, jit: bool, inlined: bool) -> str:
    return "jit" if jit else "inlined" if inlined else "kernel" if kernel else "user"


def _named_chains(
    merged: dict[tuple[str, int], list[Any]],
) -> Iterator[tuple[str, tuple[tuple[str, str], ...], int]]:
    """Each (command, chain) of ``merged`` as its command, its (name, kind) frames and its period.

    Threads of one command share their frames in the picture; equal chains share one frames tuple, so each
    chain is converted once (by its identity), and each distinct frame's (name, kind) is made once: a chain
    is then one C-level map over its frames.
    """
    converted: dict[int, tuple[tuple[str, str], ...]] = {}
    pairs: dict[ProfileFrame, tuple[str, str]] = {}
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
        yield comm, named, period


def svg_stacks(
    stacks: Sequence[ProfileStack], merged: dict[tuple[str, int], list[Any]] | None = None
) -> list[tuple[tuple[tuple[str, str], ...], int]]:
    """Stacks as (name, kind) frames with the command name first, as the folded output has them.

    ``merged``: :func:`periods_by_command` of ``stacks`` when the caller has it (see
    :attr:`ProfileResult.by_command`).
    """
    out: dict[tuple[tuple[str, str], ...], int] = {}
    for comm, named, period in _named_chains(periods_by_command(stacks) if merged is None else merged):
        path = ((comm.replace(" ", "_"), "comm"),) * bool(comm) + named
        out[path] = out.get(path, 0) + period
    return list(out.items())


def svg_tree(merged: dict[tuple[str, int], list[Any]]) -> Node:
    """``build_tree(svg_stacks(stacks, merged))`` without the stacks' paths made and merged first.

    Each (command, chain) of ``merged`` (:func:`periods_by_command`) is walked down the tree as it is: equal
    paths add up in the nodes they share, as their merged sum would (the same integers; children are sorted
    when drawn).
    """
    from forensics.report.flamegraph import Node

    root = Node("all", "root")
    comms: dict[str, tuple[str, str]] = {}
    for comm, named, period in _named_chains(merged):
        root.value += period
        node = root
        if comm:  # the command name first, as the folded output has it
            head = comms.get(comm)
            if head is None:
                head = comms[comm] = (comm.replace(" ", "_"), "comm")
            child = node.children.get(head)
            if child is None:
                child = node.children[head] = Node(head[0], head[1])
            child.value += period
            node = child
        for key in named:
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = Node(key[0], key[1])
            child.value += period
            node = child
    return root


def render_flamegraph(result: ProfileResult, base: ProfileResult | None = None) -> str:
    """The flame graph SVG (differential against ``base`` when given)."""
    from forensics.report.flamegraph import add_base, render_svg

    tree = svg_tree(result.by_command)
    p = result.profile
    unit = "samples" if result.hot.total_period == result.hot.total_samples else "period"
    sub = f"{p.source}: {result.hot.total_samples:,} samples of {result.hot.event or 'the profile'}"
    if base is None:
        return render_svg(tree, "Flame graph", sub, unit)
    scale = result.hot.total_period / base.hot.total_period if base.hot.total_period else 0.0
    add_base(tree, svg_stacks(base.stacks, base.by_command), scale)
    sub += f"; red grew, blue shrank against {base.profile.source}"
    return render_svg(tree, "Differential flame graph", sub, unit, differential=True)


def _pct(x: float) -> str:
    return f"{x:.2f}%"


def _table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n\n"


def _head(result: ProfileResult) -> str:
    hot, p = result.hot, result.profile
    span = f", {p.start:.6f}-{p.end:.6f} s" if p.start is not None and p.end is not None else ""
    # perf report's "Samples: N of event 'E'" and "Event count": of an event not of CPU time, the shares are of it.
    unit = hot.sampled.period_unit
    seconds = f" ({hot.total_period / 1e9:,.3f} s of CPU time)" if unit == "ns" else ""
    counted = (
        f"period {hot.total_period:,}" + (f" {unit}{seconds}" if unit else "")
        if hot.sampled.cpu_time
        else f"counts of {hot.sampled.unit}, not CPU time; event count {hot.total_period:,}"
    )
    return (
        f"{p.source} ({p.kind}): {hot.total_samples:,} samples of {hot.event or 'folded stacks'}, "
        f"{counted}{span}; kernel {_pct(hot.kernel.share)}, user {_pct(hot.user.share)}"
        + (
            f", no call chain {_pct(hot.no_frames.share)} ({hot.no_frames.samples:,} samples perf printed without "
            "frames: neither kernel nor user)"
            if hot.no_frames
            else ""
        )
    )


def _first_sample(p: Profile, cp: CallPath) -> str:
    """Where a call path's first sample is: a line of the text, or a perf.data's sample by its time and CPU and its
    line of perf script's output (as its findings' evidence cites it: forensics.model.perf_sample_said)."""
    if p.kind != "perf.data":
        return f"line {cp.first_line}"
    return perf_sample_said(cp.first_line, *sample_at(cp.first_header))


def _sample_json(cp: CallPath) -> dict[str, Any]:
    """A perf.data's call path's first sample: its time and CPU (null: perf script printed none)."""
    ts, cpu = sample_at(cp.first_header)
    return {"time": ts, "cpu": cpu}


def _tables(
    result: ProfileResult, top: int, deltas: list[SymbolDelta] | None
) -> list[tuple[str, list[str], list[list[str]]]]:
    """The hotspot tables (title, header, rows) shared by the text and markdown renderers."""
    hot, p = result.hot, result.profile
    out = [
        ("Hotspots (self)", ["self", "samples", "space", "symbol", "dso"],
         [[_pct(r.share), str(r.samples), _SPACE[r.kernel], r.key, r.dso] for r in hot.self_symbols[:top]]),
        ("Hotspots (total, with callees)", ["total", "samples", "symbol"],
         [[_pct(r.share), str(r.samples), r.key] for r in hot.total_symbols[:top]]),
    ]  # fmt: skip
    if hot.sampled.cpu_time:  # the classes judge CPU time: of another event's samples there are none to show
        rows = [[_pct(c.share), str(c.samples), c.rule.title, c.rule.next_step] for c in result.classes]
        out.append(("What they mean", ["share", "samples", "class", "next step"], rows))
    if p.kind != "folded":
        out += [
            ("Per DSO (self)", ["self", "samples", "dso"],
             [[_pct(r.share), str(r.samples), r.key] for r in hot.dsos[:top]]),
            ("Per thread", ["share", "samples", "thread"],
             [[_pct(r.share), str(r.samples), r.key] for r in hot.threads[:top]]),
        ]  # fmt: skip
    rows = []
    for sym, paths in hot.paths.items():
        for cp in paths:
            chain = " <- ".join(reversed(cp.frames[-8:])) + (" <- .." if len(cp.frames) > 8 else "")
            rows.append([_pct(cp.share), sym, chain, _first_sample(p, cp)])
    out.append(("Call paths to the top hotspots", ["share", "hotspot", "path (leaf first)", "first sample"], rows))
    if deltas is not None:
        out.append(("Difference against the base (self share)", ["change", "base", "new", "symbol"],
                    [[f"{d.delta:+.2f}", _pct(d.base), _pct(d.new), d.symbol] for d in deltas]))  # fmt: skip
    return out


def profile_document(result: ProfileResult, top: int, deltas: list[SymbolDelta] | None = None) -> Document:
    """The hotspot tables of one profile as a document."""
    # Here, not at import: the text and JSON formats never build a document (its module costs ~5 ms of start-up).
    from forensics.report.document import Block, Document, Lines, Paragraph, Section, Table

    blocks: list[Block] = [Paragraph(_head(result))]
    if result.profile.notes:
        blocks.append(Lines(tuple("> " + note for note in result.profile.notes)))
    for title, header, rows in _tables(result, top, deltas):
        empty = ("(none)", *([""] * (len(header) - 1)))
        blocks.append(Section(title, (Table(tuple(header), tuple(tuple(r) for r in rows), empty),)))
    return Document("CPU profile", tuple(blocks))


def render_tables(result: ProfileResult, markdown: bool, top: int, deltas: list[SymbolDelta] | None = None) -> str:
    """The hotspot tables of one profile as text or markdown."""
    if markdown:
        from forensics.report.document import to_markdown

        return to_markdown(profile_document(result, top, deltas)) + "\n"
    out = [_head(result) + "\n\n"]
    out += ["note: " + note + "\n" for note in result.profile.notes]
    if result.profile.notes:
        out.append("\n")
    out += [_table(title, header, rows) for title, header, rows in _tables(result, top, deltas)]
    return "".join(out)


def _shares(rows: Any, n: int, extra: bool = False) -> list[dict[str, Any]]:
    out = []
    for r in rows[:n]:
        d: dict[str, Any] = {"name": r.key, "pct": round(r.share, 2), "samples": r.samples}
        if extra:
            d["space"] = {True: "kernel", False: "user", None: "none"}[r.kernel]
            if r.dso:
                d["dso"] = r.dso
        out.append(d)
    return out


def to_document(result: ProfileResult, deltas: list[SymbolDelta] | None, budget: int, top: int = 15) -> dict[str, Any]:
    """The ``kforensic.profile/1`` JSON digest, cut until it fits in ``budget`` bytes."""
    import json  # here: only the JSON format needs it (text runs never load the json package)
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
            "counts": hot.sampled.unit,  # "CPU time", or the unit of an event that is not ("context switches")
            "samples": hot.total_samples,
            # What perf lost while recording (None: nothing): the shares are of the samples seen.
            "lost": None
            if p.loss is None
            else {"samples": p.loss.lost, "seen": p.loss.seen, "pct": p.loss.share, "chunks": p.loss.chunks},
            "period": hot.total_period,
            "period_unit": hot.sampled.period_unit or None,
            "span": [p.start, p.end] if p.start is not None else None,
            "notes": p.notes,
            "kernel_pct": round(hot.kernel.share, 2),
            "user_pct": round(hot.user.share, 2),
            "no_frames_pct": round(hot.no_frames.share, 2) if hot.no_frames else 0.0,
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
                    {
                        "pct": round(cp.share, 2),
                        "stack": list(cp.frames[-10:]),
                        "line": cp.first_line,  # of perf script's output for a perf.data (its sample's time and CPU)
                        **(_sample_json(cp) if p.kind == "perf.data" else {}),
                    }
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


@dataclass(frozen=True)
class ProfileRenderer:
    """``kforensic profile``: the hotspot tables (``top`` rows, and the difference to a base), then the incident;
    or the size-bounded kforensic.profile JSON digest (``digest_bytes``)."""

    top: int
    deltas: list[SymbolDelta] | None = None
    digest_bytes: int = 8192

    def text(self, result: ProfileResult, to: Destination) -> str:
        return render_tables(result, False, self.top, self.deltas) + IncidentRenderer().text(result.incident, to)

    def markdown(self, result: ProfileResult, to: Destination) -> str:
        return render_tables(result, True, self.top, self.deltas) + IncidentRenderer().markdown(result.incident, to)

    def json(self, result: ProfileResult, to: Destination) -> str:
        import json

        document = to_document(result, self.deltas, self.digest_bytes, self.top)
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"

    def html(self, result: ProfileResult, to: Destination) -> str:
        from forensics.report.html import document_page

        return document_page(profile_document(result, self.top, self.deltas), result.incident)
