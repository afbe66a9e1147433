"""The leak plots' UTC axis: tick labels that tell the ticks apart at the store's span."""

from __future__ import annotations

import pytest

from forensics.leakplots import utc_axis
from forensics.report.mpl import pyplot


@pytest.mark.parametrize(("span_s", "step_s"), [(150.0, 5.0), (3600.0, 10.0), (7 * 86400.0, 600.0)])
def test_each_tick_of_the_time_axis_has_its_own_label(span_s: float, step_s: float) -> None:
    """A 150-s store's plot labelled its five ticks all "12-07 22:52" (the format stopped at minutes, ue24 F12):
    at every span, from minutes to a week, the drawn tick labels differ."""
    import numpy as np

    plt = pyplot()
    start = 1796240000.0  # 2026-12-02 19:33:20 UTC
    days = (start + np.arange(0.0, span_s + step_s, step_s)) / 86400.0
    fig, ax = plt.subplots()
    try:
        ax.plot(days, np.arange(len(days)))
        utc_axis(ax)
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    finally:
        plt.close(fig)
    assert len(labels) >= 3, labels
    assert len(set(labels)) == len(labels), labels
