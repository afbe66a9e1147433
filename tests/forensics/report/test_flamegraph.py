"""The flame graph SVG: well-formed, one rectangle per frame, escaped names, and search and zoom in a real browser."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from collectors.perf_script import read_profile
from forensics.pipelines.profile import analyse_profile
from forensics.report.flamegraph import MIN_WIDTH, WIDTH, Node, build_tree, render_svg
from forensics.report.profile import render_flamegraph, svg_stacks, svg_tree

DATA = Path(__file__).resolve().parents[2] / "data" / "profile"
SVG = "{http://www.w3.org/2000/svg}"


def _nodes(root: Node, total: int) -> list[Node]:
    """Frames wide enough to draw, walked like the renderer (a child is drawn only if its parent is)."""
    scale = (WIDTH - 20) / total
    out: list[Node] = []
    todo = [root]
    while todo:
        node = todo.pop()
        if node.value * scale < MIN_WIDTH:
            continue
        out.append(node)
        todo.extend(node.children.values())
    return out


def test_one_rectangle_per_frame_and_escaped_names() -> None:
    result = analyse_profile(str(DATA / "jit.perf.txt.gz"))
    svg = render_flamegraph(result)
    doc = ET.fromstring(svg)  # well-formed XML, whatever the symbol names hold
    groups = [g for g in doc.iter(f"{SVG}g") if g.get("class") == "f"]
    tree = build_tree(svg_stacks(result.stacks))
    assert len(groups) == len(_nodes(tree, tree.value))
    assert all(len(g.findall(f"{SVG}rect")) == 1 for g in groups)
    names = {g.get("data-n") for g in groups}
    assert "jit::loop<int&, q>" in names  # a name with < & > survives the round trip
    assert "jit::loop&lt;int&amp;, q&gt;" in svg and "jit::loop<int&" not in svg
    jit = next(g for g in groups if g.get("data-n") == "jit::loop<int&, q>")
    assert jit.get("data-k") == "jit"
    title = jit.find(f"{SVG}title")
    assert title is not None and title.text is not None and title.text.startswith("jit::loop<int&, q> (")


def _same_tree(a: Node, b: Node) -> bool:
    return (
        (a.name, a.kind, a.value, a.base) == (b.name, b.kind, b.value, b.base)
        and a.children.keys() == b.children.keys()
        and all(_same_tree(c, b.children[k]) for k, c in a.children.items())
    )


@pytest.mark.parametrize("name", ["kernel", "contend", "mixed", "jit", "interp"])
def test_the_tree_is_made_from_the_merged_chains_as_from_the_paths(name: str) -> None:
    # Walked per (command, chain), equal paths adding up in the nodes they share: the tree of the merged paths.
    # Commands varied (some the same name with spaces, some empty) so that paths of several chains merge.
    result = analyse_profile(str(DATA / f"{name}.perf.txt.gz"))
    merged = dict(result.by_command)
    for i, ((comm, ident), (frames, period)) in enumerate(list(merged.items())):
        merged[(["", "a b", "a_b", comm][i % 4], ident)] = [frames, period + 1]
    assert _same_tree(svg_tree(merged), build_tree(svg_stacks(result.stacks, merged)))
    assert render_svg(svg_tree(result.by_command), "t") == render_svg(build_tree(svg_stacks(result.stacks)), "t")


def test_widths_are_the_shares() -> None:
    tree = build_tree([((("a", "user"), ("b", "kernel")), 3), ((("a", "user"), ("c", "user")), 1)])
    doc = ET.fromstring(render_svg(tree, "t"))
    width = {g.get("data-n"): float(g.get("data-w") or 0) for g in doc.iter(f"{SVG}g") if g.get("class") == "f"}
    assert width["all"] == pytest.approx(WIDTH - 20)
    assert width["b"] == pytest.approx(3 * width["c"], rel=1e-3)


def test_the_svg_is_sized_to_the_frames_it_draws() -> None:
    # A deep chain of a single sample among 100,000 is too narrow to draw: it must not make the picture tall.
    shallow = ((("a", "user"), ("b", "user")), 100_000)
    deep = (tuple((f"f{i}", "user") for i in range(200)), 1)
    alone = ET.fromstring(render_svg(build_tree([shallow]), "t"))
    both = ET.fromstring(render_svg(build_tree([shallow, deep]), "t"))
    assert both.get("height") == alone.get("height")
    drawn = [g for g in both.iter(f"{SVG}g") if g.get("class") == "f"]
    top = max(int(g.get("data-d") or 0) for g in drawn)
    assert int(both.get("height") or 0) < (top + 2) * 16 + 100  # no empty band above the top frame


def test_differential_colours_growth_red_and_shrinkage_blue() -> None:
    base = analyse_profile(str(DATA / "mixed.perf.txt.gz"))
    new = analyse_profile(str(DATA / "kernel.perf.txt.gz"))
    doc = ET.fromstring(render_flamegraph(new, base))
    fills = {g.get("data-n"): g.find(f"{SVG}rect").get("fill") for g in doc.iter(f"{SVG}g") if g.get("class") == "f"}  # type: ignore[union-attr]
    assert fills["copy_folio_from_iter_atomic"].startswith("rgb(255,")  # only in the new profile: grew
    assert fills["all"] == "rgb(250,250,250)"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def dump_dom(url: str) -> str:
    """The DOM after the page's scripts ran, from headless Chromium."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory(prefix="kf-chromium-") as profile_dir:
        proc = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile_dir}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            timeout=90,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-500:]
    return proc.stdout.decode()


def _frames(dom: str) -> list[str]:
    return re.findall(r"<g [^>]*class=\"f[^\"]*\"[^>]*>", dom)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_search_and_zoom_run_in_headless_chromium(tmp_path: Path) -> None:
    result = analyse_profile(str(DATA / "mixed.perf.txt.gz"))
    path = tmp_path / "flame.svg"
    path.write_text(render_flamegraph(result))
    doc = ET.fromstring(path.read_text())
    groups = [g for g in doc.iter(f"{SVG}g") if g.get("class") == "f"]

    # Search: the frames whose names match are marked, and the matched share is the samples' share.
    dom = dump_dom(path.as_uri() + "?s=^spin_math")
    frames = _frames(dom)
    assert len(frames) == len(groups)  # the script ran on every frame and the DOM kept them all
    expected = sum(1 for g in groups if (g.get("data-n") or "").startswith("spin_math"))
    assert sum(1 for f in frames if "match" in f) == expected >= 1
    share = next(r.share for r in result.hot.self_symbols if r.key.startswith("spin_math"))
    matched = re.search(r'data-matched="([\d.]+)"', dom)
    assert matched is not None and float(matched.group(1)) == pytest.approx(share, abs=0.2)
    assert "Matched: " in dom

    # Zoom on the memmove frame: it fills the width, its ancestors stay faded, the rest is hidden.
    target = next(g for g in groups if g.get("data-n") == "__memmove_avx512_unaligned_erms")
    ident = (target.get("id") or "")[1:]
    dom = dump_dom(path.as_uri() + f"?zoom={ident}")
    zoomed = re.search(rf'<g [^>]*id="f{ident}"[^>]*>.*?<rect [^>]*width="([\d.]+)"', dom, re.S)
    assert zoomed is not None and float(zoomed.group(1)) == pytest.approx(WIDTH - 20, abs=0.01)
    frames = _frames(dom)
    assert sum(1 for f in frames if "faded" in f) == int(target.get("data-d") or 0)  # its ancestors
    assert sum(1 for f in frames if "zoomhidden" in f) > len(frames) // 2
    unzoom = re.search(r'<text [^>]*id="unzoom"[^>]*>', dom)
    assert unzoom is not None and "hide" not in unzoom.group(0)


def test_svg_of_folded_input(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "x.folded"
    path.write_bytes(gzip.decompress((DATA / "contend.folded.gz").read_bytes()))
    profile = read_profile(str(path))
    assert profile.kind == "folded"
    doc = ET.fromstring(render_flamegraph(analyse_profile(str(path))))
    assert any(g.get("data-n") == "critical" for g in doc.iter(f"{SVG}g"))


def test_escaping_is_xml_sax_saxutils() -> None:
    """The SVG's own escape/quoteattr (no urllib import at start-up) write what xml.sax.saxutils writes."""
    from xml.sax import saxutils

    from forensics.report.flamegraph import escape, quoteattr

    alphabet = ["a", "&", "<", ">", '"', "'", "\n", "\r", "\t", "&amp;", "é"]
    for size in range(1, 4):
        for chars in itertools.product(alphabet, repeat=size):
            text = "".join(chars)
            assert (escape(text), quoteattr(text)) == (saxutils.escape(text), saxutils.quoteattr(text)), text
