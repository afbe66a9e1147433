"""Imports run one way: every import of the project (module level and inside functions) against its layers.

The layers are those of docs/architecture.md, lowest first.  A module may import
modules of its own layer and of the layers below it, never one above, and some
layers never import some below them (``APART``: results no detector or
collector, renderers no detector or collector, pipelines no renderer).  The allowlist is empty: a new exception is a
design change to make in the doc first.
"""

from __future__ import annotations

import ast
import functools
import gc
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# One pytest-xdist worker runs this file (make test: --dist loadgroup), so that the tree is parsed once (parsed()).
pytestmark = pytest.mark.xdist_group("architecture")

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
            "forensics.gcpause",
            "forensics.types",
        ),
    ),
    ("collectors", ("collectors",)),
    ("detectors", ("detectors",)),
    ("drgn adapter", ("forensics.vmcore",)),
    (
        "results",
        (
            "forensics.types.results",
            "forensics.types.profile_result",
            "forensics.types.dmesg_result",
            "forensics.types.trace_result",
            "forensics.types.figures",
            "forensics.types.fleet",
        ),
    ),
    ("renderers", ("forensics.report", "forensics.leakplots", "forensics.spanplots", "forensics.delivery")),
    ("pipelines", ("forensics.pipelines", "forensics.fleet")),
    ("commands", ("forensics.commands",)),
    ("cli", ("forensics.cli", "forensics.__main__")),
)

#: (importer, imported) layers that never import each other although the second is below the first:
#: detectors are pure and read typed snapshots (forensics/types), never the readers that make them; results
#: hold records of forensics/types only (a record that crosses a layer lives there, not beside its maker);
#: renderers read results and the types they hold, and run no analysis and read no input (no detector,
#: collector or drgn adapter); pipelines return results and render nothing (the command renders, the delivery
#: step draws).
APART: frozenset[tuple[str, str]] = frozenset(
    {
        ("detectors", "collectors"),
        ("results", "collectors"),
        ("results", "detectors"),
        ("results", "drgn adapter"),
        ("renderers", "detectors"),
        ("renderers", "collectors"),
        ("renderers", "drgn adapter"),
        ("pipelines", "renderers"),
    }
)

#: (importer, imported) module pairs allowed against the layers: none.  A new exception is a design change to
#: make in docs/architecture.md first.
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


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _stamp(path: Path) -> tuple[int, int]:
    """What says a file changed: its mtime and size (a test's tree under tmp_path is written before it is read)."""
    info = path.stat()
    return info.st_mtime_ns, info.st_size


def parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per session (every test here walks the same files; the trees are read,
    never changed)."""
    return _parsed(path, _stamp(path))


@functools.cache
def _parsed(path: Path, _stamp: tuple[int, int]) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


@pytest.fixture(scope="module", autouse=True)
def _trees_dropped_after_the_module() -> Iterator[None]:
    """The syntax trees are kept for this module's tests only: some two million objects, which every later full
    garbage collection of the process walked again (pytest's own two at the session's end among them).  While they
    are kept, the cyclic garbage collector is off: its full collections walked them 9 times during the module's
    tests (4.8 s of the worker's CPU, counted by gc.callbacks, 2026-12-07, load ~8).  The trees hold no reference
    cycle (a node refers to its children only): dropping the caches frees them by their reference counts; the
    cycles the tests make meanwhile are collected when the collector is back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        _parsed.cache_clear()
        _walked.cache_clear()
        if was_enabled:
            gc.enable()


def walk(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of the tree in :func:`ast.walk`'s order, listed once per tree and session: five checks walk each
    file's tree, and ``ast.walk``'s generators (iter_child_nodes, iter_fields) cost more than the checks themselves."""
    return _walked(tree)


@functools.cache  # a tree hashes by identity; parsed() keeps each file's tree for the module's tests
def _walked(tree: ast.AST) -> tuple[ast.AST, ...]:
    out = [tree]
    for node in out:  # breadth first, as ast.walk: the list grows behind the loop
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                out += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                out.append(value)
    return tuple(out)


def _imports(path: Path, root: Path = ROOT) -> list[tuple[str, int]]:
    """Every module the file imports (``from x import y`` counts ``x.y`` when ``y`` is a module), with its line."""
    return list(_imports_of(path, root, _stamp(path)))


@functools.cache
def _imports_of(path: Path, root: Path, _stamp: tuple[int, int]) -> tuple[tuple[str, int], ...]:
    tree = parsed(path)
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out = []
    for node in walk(tree):
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
                out.append((sub if _is_module(sub, root) else module, node.lineno))
    return tuple(out)


def _is_module(name: str, root: Path = ROOT) -> bool:
    """Whether a dotted name is a module or package of the tree at ``root``."""
    where = root / Path(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _files(root: Path = ROOT) -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (root / pkg).rglob("*.py"))


def violations(root: Path = ROOT) -> list[str]:
    """Every import that runs upward, as ``file:line: importer (layer) -> imported (layer)``."""
    out: list[str] = []
    for path in _files(root):
        importer = _module_name(path, root)
        mine = layer_of(importer)
        assert mine is not None, f"{importer} belongs to no layer of tests/test_architecture.py"
        for imported, line in _imports(path, root):
            theirs = layer_of(imported)
            if theirs is None or (importer, imported) in ALLOWED:
                continue
            if theirs <= mine and (LAYERS[mine][0], LAYERS[theirs][0]) not in APART:
                continue
            out.append(
                f"{path.relative_to(root)}:{line}: {importer} ({LAYERS[mine][0]}) -> {imported} ({LAYERS[theirs][0]})"
            )
    return list(dict.fromkeys(out))


def test_imports_run_downward_only() -> None:
    found = violations()
    assert not found, "imports against the layers of docs/architecture.md:\n" + "\n".join(found)


def _python_files_of_the_repository() -> Iterator[Path]:
    """Every .py file of the repository, sorted, without walking into hidden directories (.venv, .git, caches:
    thousands of files, none of them the project's) or vmcore_fixtures/work/ (git-ignored: the fixture builder's
    kernel trees and their scripts)."""
    found = []
    for directory, subdirs, files in os.walk(ROOT):
        here = Path(directory)
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and here / d != ROOT / "vmcore_fixtures" / "work"]
        found += [here / name for name in files if name.endswith(".py")]
    yield from sorted(found)


def test_no_module_under_commands_is_imported_outside_the_cli() -> None:
    users = []
    for path in _python_files_of_the_repository():
        if path.is_relative_to(ROOT / "forensics" / "commands"):
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
    """The check is not vacuous: imports inside functions, relative ones and the apart rules are all seen."""
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "forensics" / "pipelines").mkdir()
    (tmp_path / "forensics" / "pipelines" / "__init__.py").write_text("")
    (tmp_path / "forensics" / "pipelines" / "sources.py").write_text("")
    (tmp_path / "collectors" / "reader.py").write_text("X = 1\n")
    (tmp_path / "detectors" / "probe.py").write_text(
        "from collectors.reader import X\n\ndef f() -> None:\n    from forensics.pipelines import sources\n"
    )
    (tmp_path / "forensics" / "model.py").write_text("from .pipelines import sources\n")
    (tmp_path / "forensics" / "report").mkdir()
    (tmp_path / "forensics" / "report" / "__init__.py").write_text("")
    (tmp_path / "forensics" / "report" / "page.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from detectors.probe import f\n"
        "from collectors import reader\n"
    )
    (tmp_path / "forensics" / "pipelines" / "run.py").write_text("from forensics.report.page import x\n")
    found = violations(tmp_path)
    assert found == [
        "detectors/probe.py:1: detectors.probe (detectors) -> collectors.reader (collectors)",
        "detectors/probe.py:4: detectors.probe (detectors) -> forensics.pipelines.sources (pipelines)",
        "forensics/model.py:1: forensics.model (foundation) -> forensics.pipelines.sources (pipelines)",
        "forensics/pipelines/run.py:1: forensics.pipelines.run (pipelines) -> forensics.report.page (renderers)",
        "forensics/report/page.py:5: forensics.report.page (renderers) -> collectors.reader (collectors)",
        "forensics/report/page.py:4: forensics.report.page (renderers) -> detectors.probe (detectors)",
    ]


_CUTS = ("split", "rsplit", "replace", "partition", "rpartition", "removeprefix", "removesuffix")


def _rendered(node: ast.expr) -> bool:
    """Whether an expression is rendered output: a call of a render/markdown/html function."""
    while True:
        while isinstance(node, ast.Subscript):
            node = node.value
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name.startswith("render") or name.endswith(("_markdown", "_html", "_md")) or name == "to_markdown":
            return True
        if not isinstance(func, ast.Attribute):
            return False
        node = func.value  # a method of what came before: `render(...).strip().split(...)`


def _heading_cut(call: ast.Call) -> bool:
    """A literal argument that finds a markdown heading: ``"\\n## ..."`` or ``"# ..."``."""
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            text = arg.value.lstrip("\n")
            if text.startswith("#") and (arg.value.startswith("\n") or text.startswith(("# ", "## ", "### "))):
                return True
    return False


def string_surgery(tree: ast.AST) -> list[int]:
    """Lines that cut or rewrite rendered text, or look for headings in text."""
    return [
        node.lineno
        for node in walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CUTS
        and (_rendered(node.func.value) or _heading_cut(node))
    ]


def test_no_string_surgery_on_rendered_output() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _files() for line in string_surgery(parsed(path))]
    assert not found, "rendered text cut or rewritten (build a Document instead):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'details = render_vmcore_markdown(result).split("\\n## Findings (incident)", 1)[0]',
        'table = render_tables(result, fmt, 10).replace("# CPU profile\\n\\n", "", 1)',
        'body = text.split("\\n# kforensic incident report", 1)[0]',
        'x = to_markdown(doc).splitlines()[0].replace("a", "b")',
    ],
)
def test_string_surgery_is_recognised(source: str) -> None:
    assert string_surgery(ast.parse(source)) == [1]


def test_ordinary_string_work_is_not_surgery() -> None:
    assert string_surgery(ast.parse('x = line.split(",", 1)\ny = name.replace("|", "\\\\|")')) == []


#: The pure detector helpers that steer what the drgn adapter reads (which frame crashed, which operands of a
#: BUG_ON's condition to read, how to decode the faulting instruction).  The adapter runs no analysis: it may
#: import these and no other detector module (the analysis and the incident are the pipeline's).
STEERING = frozenset({"detectors.vmcore.cexpr", "detectors.vmcore.disasm", "detectors.vmcore.findings"})


def test_the_drgn_adapter_imports_only_the_detector_helpers_that_steer_its_reads() -> None:
    found = {
        (path.relative_to(ROOT).as_posix(), imported)
        for path in sorted((ROOT / "forensics" / "vmcore").rglob("*.py"))
        for imported, _line in _imports(path)
        if imported.startswith("detectors")
    }
    imported = {name for _path, name in found}
    assert imported <= STEERING, sorted(found)
    assert imported == STEERING  # no stale entry
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert "pure detector helpers that steer what it reads" in doc


# ---------------------------------------------------------------- cycles, private names, imports by string


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports (module level, inside functions and under TYPE_CHECKING)."""
    modules = {_module_name(p, root): p for p in _files(root)}
    return {m: {i for i, _ in _imports(p, root) if i in modules and i != m} for m, p in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "modules that import each other (move the shared part down):\n" + "\n".join(map(str, found))


def private_imports(root: Path = ROOT) -> list[str]:
    """Every use of another project module's private name: ``from m import _x`` or ``m._x`` on an imported module."""
    out = []
    for path in _files(root):
        tree = parsed(path)
        here = _module_name(path, root)
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        bound: set[str] = set()  # local names bound to a project module
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                source = ".".join([*base, node.module] if node.module else base)
                if source.partition(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        out.append(f"{path.relative_to(root)}:{node.lineno}: {here} imports {alias.name}")
                    elif _is_module(f"{source}.{alias.name}", root):
                        bound.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                bound.update(
                    a.asname or a.name.partition(".")[0] for a in node.names if a.name.partition(".")[0] in PACKAGES
                )
        for node in walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {here} uses {node.value.id}.{node.attr}")
    return out


def test_no_module_uses_another_modules_private_names() -> None:
    found = private_imports()
    assert not found, "private names used across modules (make them public, in their module's __all__):\n" + (
        "\n".join(found)
    )


def imports_by_string(tree: ast.AST) -> list[int]:
    """Lines that import by a string: ``importlib.import_module(...)``, ``import_module(...)``, ``__import__(...)``."""
    out = []
    for node in walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                out.append(node.lineno)
    return out


def test_nothing_is_imported_by_a_string() -> None:
    """A string target hides an import from this test, from mypy and from the reader."""
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _files() for line in imports_by_string(parsed(path))]
    assert not found, "imports by string (write the import):\n" + "\n".join(found)


def test_cycles_private_names_and_string_imports_are_caught(tmp_path: Path) -> None:
    """The checks are not vacuous: a cycle through a function-level import, a private name, a string import."""
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "detectors" / "a.py").write_text("from detectors.b import helper\n\n_x = 1\n")
    (tmp_path / "detectors" / "b.py").write_text(
        "def helper() -> None:\n    from detectors import a\n\n    print(a._x)\n"
    )
    (tmp_path / "detectors" / "c.py").write_text("from detectors.a import _x\n")
    (tmp_path / "detectors" / "d.py").write_text("from detectors.c import a\n")  # not a cycle: a chain
    assert cycles(import_graph(tmp_path)) == [["detectors.a", "detectors.b"]]
    assert private_imports(tmp_path) == [
        "detectors/b.py:4: detectors.b uses a._x",
        "detectors/c.py:1: detectors.c imports _x",
    ]
    source = 'import importlib\nm = importlib.import_module("forensics.commands.dmesg")\nn = __import__("x")\n'
    assert imports_by_string(ast.parse(source)) == [2, 3]


# ---------------------------------------------------------------- one format registry

_FORMAT_NAMES = frozenset({"text", "md", "json", "html", "csv", "parquet", "prometheus"})
_FORMAT_ENUMS = frozenset({"OutputFormat", "ExportFormat"})


def format_branches(tree: ast.AST) -> list[int]:
    """Lines that compare with an output or export format: ``fmt is OutputFormat.MD``, ``fmt == "csv"``."""
    out = []
    for node in walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                member = (
                    isinstance(operand, ast.Attribute)
                    and isinstance(operand.value, ast.Name)
                    and operand.value.id in _FORMAT_ENUMS
                )
                values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                named = any(isinstance(v, ast.Constant) and v.value in _FORMAT_NAMES for v in values)
                if member or named:
                    out.append(node.lineno)
                    break
    return out


def test_only_the_format_registry_branches_on_the_format() -> None:
    """Every command renders through forensics/report/formats.py's ``render`` (one match, ending in assert_never)."""
    registry = ROOT / "forensics" / "report" / "formats.py"
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _files()
        if path != registry
        for line in format_branches(parsed(path))
    ]
    assert not found, "a branch on the output format outside the registry (add a Renderer method):\n" + "\n".join(found)
    source = registry.read_text()
    assert source.count("assert_never(fmt)") == 2  # render() and export()


@pytest.mark.parametrize(
    "source",
    [
        "if fmt is OutputFormat.JSON:\n    pass",
        'x = 1 if fmt == "md" else 2',
        "y = OutputFormat.MD != fmt",
        'z = fmt in ("csv", "parquet")',
        "w = fmt is ExportFormat.PROMETHEUS",
    ],
)
def test_a_format_branch_is_recognised(source: str) -> None:
    assert format_branches(ast.parse(source)) == [1]


# ---------------------------------------------------------------- the doc's "Where to add…"


def where_to_add(doc: str) -> list[tuple[list[str], list[str]]]:
    """Each entry of the doc's "Where to add…" section: (the paths it names, the objects it names).

    A path is a backticked token with a slash; an object is a backticked identifier that is a call
    (``name()``), a class (``CamelCase``) or a table (``UPPER``).
    """
    section = doc.split("\n## Where to add…\n", 1)[1].split("\n## ", 1)[0]
    entries = []
    for entry in section.split("\n- ")[1:]:
        tokens = re.findall(r"`([^`]+)`", entry)
        paths = [tok for tok in tokens if "/" in tok and " " not in tok]
        names = []
        for tok in tokens:
            name = tok.removesuffix("()")
            if name.isidentifier() and (tok.endswith("()") or name[0].isupper()):
                names.append(name)
        entries.append((paths, names))
    return entries


def test_the_where_to_add_section_names_what_exists() -> None:
    entries = where_to_add((ROOT / "docs" / "architecture.md").read_text())
    assert len(entries) == 4, "a vmcore root-cause analysis, a dmesg rule, an input format, an output format"
    for paths, names in entries:
        for path in paths:
            assert (ROOT / path).exists(), f"docs/architecture.md names {path}, which does not exist"
        sources = "\n".join((ROOT / p).read_text() for p in paths if p.endswith(".py"))
        for name in names:
            defined = rf"^\s*(def|class) {name}\b|^{name}\s*[:=]"
            assert re.search(defined, sources, re.M), f"{name} is not defined in {', '.join(paths)}"


def test_a_stale_where_to_add_entry_is_caught() -> None:
    doc = "x\n## Where to add…\n\n- **A thing**: `render_everything()` in `forensics/report/formats.py`.\n## Next\n"
    [(paths, names)] = where_to_add(doc)
    assert paths == ["forensics/report/formats.py"] and names == ["render_everything"]
    source = (ROOT / paths[0]).read_text()
    assert not re.search(rf"^\s*(def|class) {names[0]}\b|^{names[0]}\s*[:=]", source, re.M)


# ---------------------------------------------------------------- the complexity limit's allowlist


def complexity_exemptions(pyproject: str, sources: dict[str, str]) -> set[str]:
    """Files whose C901 pyproject ignores, and ``file:function`` of each ``# noqa: C901``."""
    table = pyproject.split("[tool.ruff.lint.per-file-ignores]", 1)[1].split("\n[", 1)[0]
    out = {m.group(1) for m in re.finditer(r'^"([^"]+)" = \[[^\]]*"C901"', table, re.M)}
    for path, text in sources.items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "# noqa: C901" in line:  # on the def's line, or a later line of its signature
                name = next(m.group(1) for j in range(i, -1, -1) if (m := re.match(r"\s*def (\w+)\(", lines[j])))
                out.add(f"{path}:{name}")
    return out


def test_the_complexity_allowlist_is_the_one_the_doc_names() -> None:
    """A short allowlist (numba kernels and their references), each named and justified in docs/architecture.md."""
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in _files() if "C901" in p.read_text()}
    found = complexity_exemptions((ROOT / "pyproject.toml").read_text(), sources)
    doc = (ROOT / "docs" / "architecture.md").read_text().split("### Complexity", 1)[1].split("\n### ", 1)[0]
    assert found, "the allowlist is read (pyproject per-file-ignores and noqa comments)"
    for entry in found:
        path, _, function = entry.partition(":")
        assert f"`{path}`" in doc, f"{path} is exempt from C901 but docs/architecture.md does not name it"
        if function:
            assert f"`{function}`" in doc, f"{entry} is exempt from C901 but docs/architecture.md does not name it"
    assert len(found) <= 8, "the allowlist is short: split the function instead"


def test_complexity_exemptions_are_read() -> None:
    pyproject = '[tool.ruff.lint.per-file-ignores]\n"tests/**" = ["S101"]\n"a/k.py" = ["C901"]\n\n[tool.mypy]\n'
    source = "def f(\n    x: int,\n) -> int:  # noqa: C901\n    return x\n\n\ndef g() -> None:\n    pass\n"
    assert complexity_exemptions(pyproject, {"a/m.py": source}) == {"a/k.py", "a/m.py:f"}
