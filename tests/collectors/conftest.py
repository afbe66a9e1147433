"""The collectors' tests' shared fixtures."""

from __future__ import annotations

import pytest

from tests.collectors import aot_build, ctf_check


@pytest.fixture(scope="session")
def aot_built(tmp_path_factory: pytest.TempPathFactory) -> aot_build.AotBuild:
    """The kernels built ahead of time into a new cache directory, once (tests/collectors/aot_build.py)."""
    return aot_build.build(tmp_path_factory.mktemp("aot"))


def _shares_decoded(item: pytest.Item | None) -> bool:
    mark = item.get_closest_marker("xdist_group") if item is not None else None
    return mark is not None and ctf_check.GENERAL_DECODED in mark.args


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the last test of :data:`ctf_check.GENERAL_DECODED` that this worker runs in a row, the decoded streams
    are dropped (a later test of the group would decode them again): kept, every later full garbage collection of
    the worker walked their events."""
    if _shares_decoded(item) and not _shares_decoded(nextitem):
        ctf_check.drop_decoded()
