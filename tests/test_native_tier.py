"""The native tier's table (tests/conftest.py, ``NATIVE_BUILDS``): the tests that ``make test`` leaves out and ``make
test-native`` runs, those whose fixtures build ``make compile``'s native code with a C compiler.

A fixture renamed without its entry would move its build back into ``make test`` (its tests marked no more), and a
test file building native code without an entry would run its build there too: both fail here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import NATIVE_BUILDS

ROOT = Path(__file__).resolve().parents[1]

#: What starts a build of native code in a test's source: mypyc's (forensics/native.py) or numba.pycc's
#: (tests/collectors/aot_build.py, which runs make compile's ``build_ahead``).
BUILDS = ("native.build(", "aot_build.build(", "build_ahead()")


def _files(where: str) -> list[Path]:
    path = ROOT / where
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _fixtures(path: Path) -> set[str]:
    """The names of the functions decorated ``@pytest.fixture`` (with or without arguments) in ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Attribute) and target.attr == "fixture":
                    found.add(node.name)
    return found


def test_each_entry_names_a_fixture_defined_where_it_says() -> None:
    for where, name in NATIVE_BUILDS:
        assert any(name in _fixtures(path) for path in _files(where)), (where, name)


def test_every_test_file_that_builds_native_code_is_in_the_table() -> None:
    building = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*.py")
        if path.name != Path(__file__).name and any(call in path.read_text() for call in BUILDS)
    }
    assert building  # the calls searched for still exist
    for name in sorted(building):
        assert any(name.startswith(where) for where, _ in NATIVE_BUILDS), name
