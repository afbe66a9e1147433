"""The collectors' tests' shared fixtures."""

from __future__ import annotations

import pytest

from tests.collectors import aot_build


@pytest.fixture(scope="session")
def aot_built(tmp_path_factory: pytest.TempPathFactory) -> aot_build.AotBuild:
    """The kernels built ahead of time into a new cache directory, once (tests/collectors/aot_build.py)."""
    return aot_build.build(tmp_path_factory.mktemp("aot"))
