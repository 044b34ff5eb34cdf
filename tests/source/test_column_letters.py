"""Column letters of a CSV file's cells are openpyxl's, without importing openpyxl."""

from __future__ import annotations

import pytest
from openpyxl.utils import get_column_letter

from loader.source.readers.rows import column_letter


def test_every_column_letter_is_openpyxls() -> None:
    for index in (*range(0, 800), 701, 702, 703, 16383, 18276, 18277):
        assert column_letter(index) == get_column_letter(index + 1)


def test_a_column_past_zzz_is_refused_as_openpyxl_refuses_it() -> None:
    with pytest.raises(ValueError):
        column_letter(18278)
