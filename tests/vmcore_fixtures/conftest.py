"""Fixtures over the real kdump vmcores committed under vmcore_fixtures/."""

from __future__ import annotations

import pytest

from tests.vmcore_cases import MANIFEST, VmcoreCase, case_names, load_case

_MISSING = "<no-vmcore-fixtures>"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "vmcore_case" in metafunc.fixturenames:
        names = case_names() or [_MISSING]
        metafunc.parametrize("vmcore_case", names, indirect=True)


@pytest.fixture
def vmcore_case(request: pytest.FixtureRequest) -> VmcoreCase:
    """One fixture case: vmcore, vmlinux, module debug files, dmesg, console log, expected."""
    if request.param == _MISSING:
        pytest.skip(f"{MANIFEST} is absent: no vmcore fixtures (run vmcore_fixtures/build.sh)")
    return load_case(request.param)
