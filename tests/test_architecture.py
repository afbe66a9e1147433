"""Imports run one way: every import of the project (module level and inside functions) against its layers.

The layers are those of docs/architecture.md, lowest first.  A module may import
modules of its own layer and of the layers below it, never one above.  The
allowlist is empty: a new exception is a design change to make in the doc first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: (layer, module prefixes), lowest first.  The longest matching prefix decides a module's layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "forensics",  # the package itself: __version__
            "forensics.model",
            "forensics.errors",
            "forensics.textcodec",
            "forensics.evidence",
            "forensics.serialize",
            "forensics.units",
            "forensics.quoting",
            "forensics.output",
            "forensics.types",
        ),
    ),
    ("collectors", ("collectors",)),
    ("detectors", ("detectors",)),
    ("drgn adapter", ("forensics.vmcore",)),
    ("results", ("forensics.types.results",)),
    ("renderers", ("forensics.report", "forensics.leakplots", "forensics.spanplots", "forensics.delivery")),
    ("pipelines", ("forensics.pipelines", "forensics.fleet")),
    ("commands", ("forensics.commands",)),
    ("cli", ("forensics.cli", "forensics.__main__")),
)

#: Layers that never import each other although one is below the other: detectors are pure and read
#: typed snapshots (forensics/types), never the readers that make them.
APART: frozenset[tuple[str, str]] = frozenset({("detectors", "collectors")})

#: (importer, imported) pairs allowed against the layers: none.
ALLOWED: frozenset[tuple[str, str]] = frozenset()

PACKAGES = ("forensics", "collectors", "detectors")


def layer_of(module: str) -> int | None:
    """The index of the module's layer, or None for a module outside the project."""
    best: tuple[int, int] | None = None
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module the file imports (``from x import y`` counts ``x.y`` when ``y`` is a module), with its line."""
    tree = ast.parse(path.read_text(), str(path))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for a in node.names:
                sub = f"{module}.{a.name}"
                is_module = (ROOT / Path(*sub.split("."))).with_suffix(".py").is_file() or (
                    ROOT / Path(*sub.split(".")) / "__init__.py"
                ).is_file()
                out.append((sub if is_module else module, node.lineno))
    return out


def _files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def violations() -> list[str]:
    """Every import that runs upward, as ``file:line: importer (layer) -> imported (layer)``."""
    out: list[str] = []
    for path in _files():
        importer = _module_name(path)
        mine = layer_of(importer)
        assert mine is not None, f"{importer} belongs to no layer of tests/test_architecture.py"
        for imported, line in _imports(path):
            theirs = layer_of(imported)
            if theirs is None or (importer, imported) in ALLOWED:
                continue
            if theirs <= mine and (LAYERS[mine][0], LAYERS[theirs][0]) not in APART:
                continue
            out.append(
                f"{path.relative_to(ROOT)}:{line}: {importer} ({LAYERS[mine][0]}) -> {imported} ({LAYERS[theirs][0]})"
            )
    return list(dict.fromkeys(out))


def test_imports_run_downward_only() -> None:
    found = violations()
    assert not found, "imports against the layers of docs/architecture.md:\n" + "\n".join(found)


def test_no_module_under_commands_is_imported_outside_the_cli() -> None:
    users = []
    for path in sorted(ROOT.rglob("*.py")):
        if ".venv" in path.parts or path.is_relative_to(ROOT / "forensics" / "commands"):
            continue
        importer = _module_name(path)
        if importer in ("forensics.cli", "tests.test_architecture"):
            continue
        users += [
            f"{path.relative_to(ROOT)}:{ln}: {m}" for m, ln in _imports(path) if m.startswith("forensics.commands")
        ]
    assert not users, "forensics.commands is the CLI's alone:\n" + "\n".join(users)


def test_the_layers_are_the_ones_the_doc_draws() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for name, prefixes in LAYERS:
        assert f"**{name}**" in doc, f"docs/architecture.md does not name the layer {name}"
        for prefix in prefixes:
            assert f"`{prefix.replace('.', '/')}" in doc, f"docs/architecture.md does not place {prefix}"


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("forensics.types.results", "results"),
        ("forensics.types.vmcore", "foundation"),
        ("forensics.vmcore.collect", "drgn adapter"),
        ("detectors.vmcore.why", "detectors"),
        ("forensics.report.story", "renderers"),
        ("forensics.commands.report", "commands"),
        ("numpy", None),
    ],
)
def test_a_module_belongs_to_its_longest_prefix(module: str, layer: str | None) -> None:
    index = layer_of(module)
    assert (None if index is None else LAYERS[index][0]) == layer


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    """The check is not vacuous: a detector importing a collector is reported."""
    assert layer_of("detectors.sched.analyzer") == 2 and layer_of("collectors.trace_text") == 1
    assert layer_of("collectors.trace_text") < layer_of("detectors.sched.analyzer")  # type: ignore[operator]
    probe = ROOT / "detectors" / "_architecture_probe.py"
    probe.write_text("def f() -> None:\n    from forensics.pipelines import sources  # noqa: F401\n")
    try:
        found = violations()
    finally:
        probe.unlink()
    assert any("detectors._architecture_probe -> forensics.pipelines.sources (pipelines)" in v for v in found)
