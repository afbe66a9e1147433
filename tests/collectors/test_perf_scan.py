"""The numpy time masker of the profile reader, against the regular expression it stands in for."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.perf_scan import mask_times
from collectors.perf_script import read_gzip_text

DATA = Path(__file__).resolve().parents[1] / "data" / "profile"
TIME = re.compile(rb" (\d+\.\d+): ")


def test_masks_each_time_as_the_regex_finds_it() -> None:
    text = read_gzip_text(DATA / "mixed.perf.txt.gz")
    got = mask_times(text)
    assert got is not None
    found = list(TIME.finditer(text))
    assert len(found) > 100 and len(got.colons) == len(found)
    assert [m.end(1) for m in found] == got.colons.tolist()
    expected = TIME.sub(lambda m: b" " + re.sub(rb"\d", b"0", m.group(1)) + b": ", text)
    assert got.text == expected and len(got.text) == len(text)
    times = [float(m.group(1)) for m in found]
    assert (got.lo, got.hi) == (min(times), max(times))


def test_what_is_not_a_time() -> None:
    text = b"a 1.5:x 2.: 3: .5: x4.5: \n\tffff 12.25: y (z)\n"
    got = mask_times(text)
    assert got is not None
    assert got.text == b"a 1.5:x 2.: 3: .5: x4.5: \n\tffff 00.00: y (z)\n"
    assert (got.lo, got.hi) == (12.25, 12.25)
    assert mask_times(b"p 1 [0] 1234567890.1234567: 1 cpu-clock: \n") is None  # 17 digits: not exact
    # Two times sharing a space: the regex takes the first only, the masker reports both (the caller
    # then hands the chunk to the per-sample code, which needs one time per sample).
    assert len(mask_times(b"x 1.5: 2.5: y\n").colons) == 2  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(
        st.sampled_from([b" ", b".", b":", b": ", b"0", b"7", b"1234567", b"\n", b"x", b"\t", b"123456789012"]),
        max_size=60,
    ).map(b"".join),
    cut=st.integers(0, 400),
)
def test_masks_what_the_regex_finds_in_any_text_split_anywhere(text: bytes, cut: int) -> None:
    whole = mask_times(text)
    parts = mask_times(text[:cut], text[cut:])  # the caller's previous tail and the next chunk
    assert (whole is None) == (parts is None)
    if whole is not None and parts is not None:
        assert (whole.text, whole.colons.tolist(), whole.lo, whole.hi) == (
            parts.text,
            parts.colons.tolist(),
            parts.lo,
            parts.hi,
        )
    found = list(TIME.finditer(text))
    if whole is None:  # only a time too long to read exactly gives up (one sharing a space counts)
        assert max(len(m.group(1)) - 1 for m in re.finditer(rb"(?<= )(\d+\.\d+)(?=: )", text)) > 15
        return
    if len(whole.colons) != len(found):
        # Times sharing a space (`` 1.5: 2.5: ``): the regex takes the first, the masker all of them.
        assert len(whole.colons) > len(found)
        return
    assert whole.colons.tolist() == [m.end(1) for m in found]
    assert whole.text == TIME.sub(lambda m: b" " + re.sub(rb"\d", b"0", m.group(1)) + b": ", text)
    times = [float(m.group(1)) for m in found]
    assert (whole.lo, whole.hi) == ((min(times), max(times)) if times else (None, None))
