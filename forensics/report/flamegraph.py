"""Flame graph SVG, written by kforensic itself (no Perl at run time).

The picture follows Brendan Gregg's flame graphs: one rectangle per frame of the merged call tree,
its width the frame's share of the samples (the period), the root at the bottom, children sorted
by name.  The SVG carries a small script: hovering shows the frame's title (name, count, share),
clicking a frame zooms to it (its parents stay as a faded base, ``Reset zoom`` undoes), and
``Search`` (or Ctrl-F, or ``?s=REGEX`` in the URL) highlights the frames whose names match and says
what share of the samples they cover.  ``?zoom=ID`` opens zoomed on the frame with that id.

Colours say where the code runs: warm reds and yellows for user code, orange for the kernel, green
for JIT code (``perf-PID.map``), aqua for inlined frames.  In a differential graph (``--diff``)
red frames grew and blue frames shrank against the base, the deeper the colour the larger the change.
Every name is escaped (``<``, ``&``, ``>``, quotes), in titles, labels and scripts' data alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape as _html_escape


# xml.sax.saxutils has these two, but importing it imports urllib.request (http.client, email, ssl):
# 30-60 ms of every `kforensic profile --svg` start-up.  The same text out (tests compare with it).
def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities (``xml.sax.saxutils.escape``)."""
    return _html_escape(text, quote=False)


def quoteattr(text: str) -> str:
    """``text`` as a quoted XML attribute value (``xml.sax.saxutils.quoteattr``)."""
    text = escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' not in text:
        return f'"{text}"'
    if "'" not in text:
        return f"'{text}'"
    return '"{}"'.format(text.replace('"', "&quot;"))


#: What a frame is, for its colour.
KINDS = ("user", "kernel", "jit", "inlined", "comm", "root")

WIDTH = 1200
FRAME_HEIGHT = 16
FONT_SIZE = 12
FONT_WIDTH = 0.59  # average glyph width in ems, as flamegraph.pl assumes for Verdana
PAD_TOP = FONT_SIZE * 3
PAD_BOTTOM = FONT_SIZE * 2 + 10
PAD_SIDE = 10
#: Frames narrower than this many pixels are left out (they could not be seen or clicked).
MIN_WIDTH = 0.1


@dataclass
class Node:
    """A frame of the merged call tree."""

    name: str
    kind: str
    value: int = 0
    base: int = 0  # the base profile's (scaled) value, for differential graphs
    children: dict[tuple[str, str], Node] = field(default_factory=dict)


def build_tree(stacks: Iterable[tuple[tuple[tuple[str, str], ...], int]]) -> Node:
    """Merge stacks of (name, kind) frames, root first, with their counts, into one tree."""
    root = Node("all", "root")
    for frames, count in stacks:
        root.value += count
        node = root
        for name, kind in frames:
            child = node.children.get((name, kind))
            if child is None:
                child = node.children[(name, kind)] = Node(name, kind)
            child.value += count
            node = child
    return root


def add_base(root: Node, stacks: Iterable[tuple[tuple[tuple[str, str], ...], int]], scale: float) -> None:
    """Record a base profile's counts (times ``scale``) on the matching frames of ``root``."""
    root.base += 0
    for frames, count in stacks:
        value = round(count * scale)
        root.base += value
        node = root
        for name, kind in frames:
            child = node.children.get((name, kind))
            if child is None:
                break  # frames the new profile no longer has are not drawn
            child.base += value
            node = child


def _hash(name: str) -> float:
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8", "surrogateescape"), digest_size=4).digest()) / 2**32


def frame_colour(name: str, kind: str) -> str:
    """A stable colour per name in the palette of its kind: red user, orange kernel, green JIT, aqua inlined."""
    v = _hash(name)
    w = _hash(name[::-1])
    if kind == "kernel":
        return f"rgb({190 + int(65 * v)},{90 + int(65 * w)},0)"
    if kind == "jit":
        return f"rgb({int(60 * v)},{180 + int(60 * w)},{int(60 * v)})"
    if kind == "inlined":
        return f"rgb({int(50 * v)},{190 + int(40 * w)},{190 + int(40 * w)})"
    if kind in ("comm", "root"):
        return f"rgb({160 + int(40 * v)},{160 + int(40 * v)},{170 + int(40 * v)})"
    return f"rgb({200 + int(55 * v)},{50 + int(80 * w)},{50 + int(80 * w)})"


def diff_colour(delta: float) -> str:
    """Red for growth, blue for shrinkage; ``delta`` in -1..1 (share of the frame that changed)."""
    d = max(-1.0, min(1.0, delta))
    if abs(d) < 0.01:  # rounding of the scaled base, not a change
        return "rgb(250,250,250)"
    level = int(210 - 190 * abs(d))
    if d > 0:
        return f"rgb(255,{level},{level})"
    if d < 0:
        return f"rgb({level},{level},255)"
    return "rgb(250,250,250)"


def _label(name: str, width: float) -> str:
    chars = int(width / (FONT_SIZE * FONT_WIDTH))
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[: chars - 2] + ".."


def render_svg(root: Node, title: str, subtitle: str = "", unit: str = "samples", differential: bool = False) -> str:
    """The flame graph of ``root`` as a self-contained interactive SVG document."""
    total = root.value or 1
    scale = (WIDTH - 2 * PAD_SIDE) / total
    depth = _depth(root, MIN_WIDTH / scale)  # sized to what is drawn: frames too narrow to draw add no height
    height = PAD_TOP + PAD_BOTTOM + depth * FRAME_HEIGHT
    parts: list[str] = []
    counter = [0]

    def emit(node: Node, x: float, level: int, parent: int) -> None:
        width = node.value * scale
        if width < MIN_WIDTH:
            return
        ident = counter[0]
        counter[0] += 1
        y = height - PAD_BOTTOM - (level + 1) * FRAME_HEIGHT
        share = 100.0 * node.value / total
        info = f"{node.name} ({node.value:,} {unit}, {share:.2f}%)"
        if differential:
            change = node.value - node.base
            rel = change / node.value if node.value else 0.0
            info += f" [{'+' if change >= 0 else ''}{100.0 * change / total:.2f} points vs base]"
            fill = diff_colour(rel)
        else:
            fill = frame_colour(node.name, node.kind)
        parts.append(
            f'<g class="f" id="f{ident}" data-p="{parent}" data-d="{level}" data-x="{x:.2f}" data-w="{width:.2f}" '
            f'data-v="{node.value}" data-k="{node.kind}" data-n={quoteattr(node.name)}>'
            f"<title>{escape(info)}</title>"
            f'<rect x="{x:.2f}" y="{y}" width="{width:.2f}" height="{FRAME_HEIGHT - 1}" fill="{fill}" rx="2" ry="2"/>'
            f'<text x="{x + 3:.2f}" y="{y + FRAME_HEIGHT - 4}">{escape(_label(node.name, width))}</text></g>\n'
        )
        cx = x
        for key in sorted(node.children):
            child = node.children[key]
            emit(child, cx, level + 1, ident)
            cx += child.value * scale

    emit(root, PAD_SIDE, 0, -1)
    head = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        f'<svg version="1.1" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'xmlns="http://www.w3.org/2000/svg" onload="init(evt)" data-frames="{counter[0]}" data-total="{total}">\n'
        f"<style>{_CSS}</style>\n<script><![CDATA[{_SCRIPT}]]></script>\n"
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="url(#bg)"/>\n'
        f'<defs><linearGradient id="bg" y1="0" y2="1" x1="0" x2="0">'
        f'<stop stop-color="#eeeeee" offset="5%"/><stop stop-color="#eeeeb0" offset="95%"/></linearGradient></defs>\n'
        f'<text id="title" x="{WIDTH / 2}" y="{FONT_SIZE * 2}" text-anchor="middle">{escape(title)}</text>\n'
        f'<text id="subtitle" x="{WIDTH / 2}" y="{FONT_SIZE * 3}" text-anchor="middle">{escape(subtitle)}</text>\n'
        f'<text id="details" x="{PAD_SIDE}" y="{height - 10}"> </text>\n'
        f'<text id="unzoom" class="hide" x="{PAD_SIDE}" y="{FONT_SIZE * 2}">Reset zoom</text>\n'
        f'<text id="search" x="{WIDTH - PAD_SIDE - 100}" y="{FONT_SIZE * 2}">Search</text>\n'
        f'<text id="matched" x="{WIDTH - PAD_SIDE - 100}" y="{height - 10}"> </text>\n'
        + ("" if differential else _legend(height))
        + '<g id="frames">\n'
    )
    return head + "".join(parts) + "</g>\n</svg>\n"


def _legend(height: int) -> str:
    """Swatches saying which colour is which kind of code."""
    parts = []
    x = WIDTH / 2 - 180
    for label, kind in (("user", "user"), ("kernel", "kernel"), ("JIT", "jit"), ("inlined", "inlined")):
        parts.append(
            f'<rect x="{x:.0f}" y="{height - 21}" width="12" height="12" fill="{frame_colour(label, kind)}"/>'
            f'<text x="{x + 16:.0f}" y="{height - 10}">{label}</text>'
        )
        x += 90
    return '<g id="legend">' + "".join(parts) + "</g>\n"


def _depth(root: Node, least: float = 0.0) -> int:
    """Levels of the tree, counting only frames of at least ``least`` (those narrower are not drawn)."""
    best = 0
    stack = [(root, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in node.children.values() if c.value >= least)
    return best


_CSS = """
text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }
#title { font-size: 17px; }
#search, #unzoom { cursor: pointer; fill: #333; }
#search:hover, #unzoom:hover { fill: #a00; }
.hide { display: none; }
g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }
g.f text { pointer-events: none; }
g.faded rect { opacity: 0.5; }
g.zoomhidden { display: none; }
"""

# The script works on the data-* attributes each frame carries (position, width and depth at full
# size, parent id) so that zoom and search never parse labels.
_SCRIPT = """
"use strict";
var frames, details, matched, unzoomBtn, searchBtn, W, PAD = 10, FW = 12 * 0.59, total, zoomed = null;
function init(evt) {
  frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  details = document.getElementById("details");
  matched = document.getElementById("matched");
  unzoomBtn = document.getElementById("unzoom");
  searchBtn = document.getElementById("search");
  W = parseFloat(document.documentElement.getAttribute("width"));
  total = parseFloat(document.documentElement.getAttribute("data-total"));
  frames.forEach(function (g) {
    g.addEventListener("click", function () { zoom(g); });
    g.addEventListener("mouseover", function () { details.textContent = g.querySelector("title").textContent; });
    g.addEventListener("mouseout", function () { details.textContent = " "; });
  });
  unzoomBtn.addEventListener("click", unzoom);
  searchBtn.addEventListener("click", function () {
    if (searchBtn.textContent === "Reset search") { search(""); return; }
    var term = prompt("Search for (regular expression):", "");
    if (term !== null) search(term);
  });
  window.addEventListener("keydown", function (e) {
    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
      e.preventDefault();
      searchBtn.dispatchEvent(new Event("click"));
    }
  });
  var params = new URLSearchParams(document.location.search);
  if (params.get("zoom") !== null) {
    var target = document.getElementById("f" + params.get("zoom"));
    if (target) zoom(target);
  }
  if (params.get("s") !== null) search(params.get("s"));
}
function num(g, a) { return parseFloat(g.getAttribute("data-" + a)); }
function label(g, width) {
  var name = g.getAttribute("data-n"), chars = Math.floor(width / FW);
  if (chars < 3) return "";
  return name.length <= chars ? name : name.substring(0, chars - 2) + "..";
}
function place(g, x, w) {
  var r = g.querySelector("rect"), t = g.querySelector("text");
  r.setAttribute("x", x.toFixed(2));
  r.setAttribute("width", w.toFixed(2));
  t.setAttribute("x", (x + 3).toFixed(2));
  t.textContent = label(g, w);
}
function isAncestor(a, g) {
  var p = g.getAttribute("data-p");
  while (p !== "-1") {
    if ("f" + p === a.id) return true;
    p = document.getElementById("f" + p).getAttribute("data-p");
  }
  return false;
}
function zoom(node) {
  var x0 = num(node, "x"), w0 = num(node, "w"), d0 = num(node, "d"), ratio = (W - 2 * PAD) / w0;
  zoomed = node;
  unzoomBtn.classList.remove("hide");
  frames.forEach(function (g) {
    var x = num(g, "x"), w = num(g, "w"), d = num(g, "d");
    g.classList.remove("faded", "zoomhidden");
    if (g === node || (d > d0 && isAncestor(node, g))) {
      place(g, PAD + (x - x0) * ratio, w * ratio);
    } else if (d < d0 && isAncestor(g, node)) {
      g.classList.add("faded");
      place(g, PAD, W - 2 * PAD);
    } else {
      g.classList.add("zoomhidden");
    }
  });
}
function unzoom() {
  zoomed = null;
  unzoomBtn.classList.add("hide");
  frames.forEach(function (g) {
    g.classList.remove("faded", "zoomhidden");
    place(g, num(g, "x"), num(g, "w"));
  });
}
function search(term) {
  var re;
  try { re = new RegExp(term); } catch (e) { matched.textContent = "bad expression"; return; }
  var spans = [];
  frames.forEach(function (g) {
    var r = g.querySelector("rect");
    if (!r.hasAttribute("data-fill")) r.setAttribute("data-fill", r.getAttribute("fill"));
    if (term !== "" && re.test(g.getAttribute("data-n"))) {
      r.setAttribute("fill", "rgb(230,0,230)");
      g.classList.add("match");
      spans.push([num(g, "x"), num(g, "x") + num(g, "w")]);
    } else {
      r.setAttribute("fill", r.getAttribute("data-fill"));
      g.classList.remove("match");
    }
  });
  // The matched share counts nested matches once: merge the matched spans.
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -1;
  spans.forEach(function (s) {
    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }
    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }
  });
  var pct = 100 * covered / (W - 2 * PAD);
  matched.textContent = term === "" ? " " : "Matched: " + pct.toFixed(1) + "%";
  document.documentElement.setAttribute("data-matched", pct.toFixed(2));
  searchBtn.textContent = term === "" ? "Search" : "Reset search";
}
"""
