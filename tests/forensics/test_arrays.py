"""forensics.types.arrays.distinct: np.unique's values, without numpy.ma."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from forensics.types.arrays import distinct

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "values",
    [
        np.array([], dtype=np.int64),
        np.array([7], dtype=np.int64),
        np.array([3, -1, 3, 3, 0, -1, 2**40], dtype=np.int64),
        np.array([5, 4, 3, 2, 1], dtype=np.int32),
        np.array([[2, 1], [2, 9]], dtype=np.int64),  # flattened, as np.unique does
    ],
)
def test_distinct_is_np_unique(values: np.ndarray) -> None:
    got = distinct(values)
    want = np.unique(values)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


def test_distinct_does_not_import_numpy_ma() -> None:
    code = (
        "import sys, numpy as np\n"
        "from forensics.types.arrays import distinct\n"
        "assert distinct(np.array([3, 1, 3])).tolist() == [1, 3]\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
