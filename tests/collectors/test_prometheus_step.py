"""``--step auto`` measures the scrape interval where the data are (review round 9, finding 4).

5-s samples that stopped 175 s before the query's end, with a 79-s hole before that: one look-back of 300 s at
the end held 29 samples, "a sample every 10.3 s on average", so the step doubled and every other sample went
unread, unsaid.  A real local HTTP server answers the two PromQL queries ``pick_step`` asks (and the one it asked
before), computed from the samples' times as Prometheus would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from collectors.prometheus import PromClient, pick_step
from tests.helpers import serve_prometheus

T0 = 1_780_000_000.0
# every 5 s for 355 s, a 79-s hole, then every 5 s for 140 s (the reviewer's store: samples 1-72, 73-101)
STAMPS = [T0 + 5 * i for i in range(72)] + [T0 + 355 + 79 + 5 * i for i in range(29)]
END = STAMPS[-1] + 175.0  # the series stopped 175 s before the query's end
STALE = 300.0  # Prometheus' look-back for an instant vector


def _count_over_time(at: float, window: float) -> int:
    return sum(1 for t in STAMPS if at - window < t <= at)


def _value(query: str, at: float) -> float | None:
    window = re.search(r"count_over_time\(.*\[(\d+)s\]\)", query)
    if window:
        n = _count_over_time(at, float(window[1]))
        return float(n) if n else None
    return 1.0 if _count_over_time(at, STALE) else None  # count(selector): one series while not stale


def _answer(endpoint: str, form: dict[str, str]) -> bytes:
    if endpoint == "query_range":
        start, end, step = float(form["start"]), float(form["end"]), float(form["step"])
        points = []
        for k in range(int((end - start) / step) + 1):
            if (v := _value(form["query"], start + k * step)) is not None:
                points.append([start + k * step, str(v)])
        data: dict[str, object] = {
            "resultType": "matrix",
            "result": [{"metric": {}, "values": points}] if points else [],
        }
    else:
        v = _value(form["query"], float(form["time"]))
        result = [{"metric": {}, "value": [float(form["time"]), str(v)]}] if v is not None else []
        data = {"resultType": "vector", "result": result}
    return json.dumps({"status": "success", "data": data}).encode()


@pytest.fixture
def prometheus() -> Iterator[str]:
    server, url = serve_prometheus(_answer)
    try:
        yield url
    finally:
        server.shutdown()


def test_the_scrape_interval_is_read_where_the_data_are(prometheus: str) -> None:
    choice = pick_step(PromClient(prometheus), 'kf_slab_objects{instance="rt:9100"}', END - 900, END)
    assert choice.interval == pytest.approx(5.0, abs=0.2), choice.reason  # was 10.3: 29 samples over 300 s
    assert choice.step == 5.0, choice.reason  # was 10: every other sample unread
    assert "a sample every 5" in choice.reason and "10.3" not in choice.reason


def test_the_window_starts_where_the_data_do(prometheus: str) -> None:
    """ue9 9: '--since 30d' said 'data from 5,184 s before the end' (one 30-d probe step of 5,184 s before the
    first point) for series 12 min long; the window header started 1.4 h early."""
    choice = pick_step(PromClient(prometheus), 'kf_slab_objects{instance="rt:9100"}', END - 30 * 86400, END)
    assert STAMPS[0] - 11.0 <= choice.start <= STAMPS[0], (choice.start - STAMPS[0], choice.reason)  # was -5,184 s
    said = int(re.search(r"data from ([\d,]+) s before the end", choice.reason)[1].replace(",", ""))  # type: ignore[index]
    assert said <= END - STAMPS[0] + 11.0, choice.reason
