"""Progress bars: a bar with a known total ends full, a counter ends at what it counted."""

from __future__ import annotations

import pytest

from loader.console import progress_bars


def test_a_bar_with_a_total_ends_full_and_a_counter_ends_at_its_count(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bars(enabled=True) as bars:
        reading = bars.add("reading 2 mapping file(s) and their sheets", total=2)
        reading.advance(2)
        reading.done()
        fetching = bars.add("fetching school records")
        fetching.advance(3)
        fetching.done()
        quiet = bars.add("reading 1 mapping file(s)", total=1)
        quiet.done()  # done without advancing: still full, never 0/0
        assert reading.counts == (2, 2)  # type: ignore[attr-defined]
        assert fetching.counts == (3, 3)  # type: ignore[attr-defined]
        assert quiet.counts == (1, 1)  # type: ignore[attr-defined]
    capsys.readouterr()
