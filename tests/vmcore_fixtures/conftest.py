"""Fixtures over the real kdump vmcores committed under vmcore_fixtures/ (every fixture kernel)."""

from __future__ import annotations

import pytest

from tests.vmcore_cases import MANIFEST, VmcoreCase, kernel_cases, load_case

_MISSING = "<no-vmcore-fixtures>"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "vmcore_case" in metafunc.fixturenames:
        keys = [f"{kernel}/{name}" for kernel, name in kernel_cases()] or [_MISSING]
        metafunc.parametrize("vmcore_case", keys, indirect=True)


@pytest.fixture
def vmcore_case(request: pytest.FixtureRequest) -> VmcoreCase:
    """One fixture case of one kernel: vmcore, vmlinux, module debug files, dmesg, console log, expected."""
    if request.param == _MISSING:
        pytest.skip(f"{MANIFEST} is absent: no vmcore fixtures (run vmcore_fixtures/build.sh)")
    kernel, name = request.param.split("/", 1)
    return load_case(name, kernel)
