"""Building sample tables (as the store's slab_frame and counter_frame return them) from plain arrays."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

START = 1_780_000_000.0
Array = npt.NDArray[np.float64]


def slab_frame(walls: Array, caches: dict[str, tuple[int, Array]], boot: str = "boot-1") -> pd.DataFrame:
    """One row per sample and cache: ``caches`` maps a name to (object size, objects per sample)."""
    frames = []
    for name, (objsize, objects) in caches.items():
        num = np.round(objects).astype(np.int64)
        frames.append(
            pd.DataFrame(
                {
                    "sample_id": np.arange(1, len(walls) + 1),
                    "wall": walls,
                    "boot_id": boot,
                    "cache": name,
                    "active_objs": np.maximum(num - 2, 0),
                    "num_objs": num,
                    "objsize": objsize,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def counter_frame(walls: Array, fields_kb: dict[str, Array], boot: str = "boot-1") -> pd.DataFrame:
    """One row per sample and meminfo field (values in kB, as meminfo shows them)."""
    frames = [
        pd.DataFrame(
            {
                "sample_id": np.arange(1, len(walls) + 1),
                "wall": walls,
                "boot_id": boot,
                "source": "meminfo",
                "name": name,
                "unit": "kB",
                "value": np.round(values).astype(np.int64),
            }
        )
        for name, values in fields_kb.items()
    ]
    return pd.concat(frames, ignore_index=True)


def two_hours(interval: float = 60.0) -> tuple[Array, Array]:
    """(wall clock seconds, hours) of two hours of samples."""
    n = int(2 * 3600 / interval) + 1
    walls = START + np.arange(n) * interval
    return walls, (walls - START) / 3600.0
