"""In-memory tables as a `table` source's rows: pandas, polars and Arrow give the cells a list of
dicts gives, and every missing value of theirs is an empty cell."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from loader.errors import SheetError
from loader.source.readers import KINDS
from loader.source.readers.frames import cell_of, table_of
from loader.source.readers.kinds import Wanted

COLUMNS = ("Code", "Name", "Credit", "Faculty", "Starts", "Weight", "Open")
EXPECTED: list[dict[str, Any]] = [
    {"Code": "U1", "Name": "One", "Credit": 10, "Faculty": "Arts", "Starts": date(2027, 2, 1), "Weight": 1,
     "Open": True},
    {"Code": "U2", "Name": "Two", "Credit": None, "Faculty": "Law", "Starts": None, "Weight": None, "Open": False},
    {"Code": "U3", "Name": None, "Credit": 12, "Faculty": None, "Starts": datetime(2027, 3, 1, 9, 30),
     "Weight": 2.5, "Open": None},
]


def _pandas() -> pd.DataFrame:
    return pd.DataFrame({
        "Code": ["U1", "U2", "U3"],
        "Name": ["One", "Two", None],
        "Credit": pd.array([10, None, 12], dtype="Int64"),  # a nullable integer column
        "Faculty": pd.Categorical(["Arts", "Law", None]),
        "Starts": pd.Series([datetime(2027, 2, 1), None, datetime(2027, 3, 1, 9, 30)], dtype="datetime64[ns]"),
        "Weight": [1.0, np.nan, 2.5],
        "Open": pd.array([True, False, None], dtype="boolean"),
    })


def _polars() -> pl.DataFrame:
    return pl.DataFrame({
        "Code": ["U1", "U2", "U3"],
        "Name": ["One", "Two", None],
        "Credit": pl.Series([10, None, 12], dtype=pl.Int64),
        "Faculty": pl.Series(["Arts", "Law", None], dtype=pl.Categorical),
        "Starts": pl.Series([datetime(2027, 2, 1), None, datetime(2027, 3, 1, 9, 30)], dtype=pl.Datetime("us")),
        "Weight": [1.0, float("nan"), 2.5],  # polars keeps NaN apart from null: both are empty
        "Open": [True, False, None],
    })


def _arrow() -> pa.Table:
    return pa.Table.from_pandas(_pandas(), preserve_index=False)


def _dicts() -> list[dict[str, Any]]:
    return [{**row, "Starts": pd.NaT if row["Starts"] is None else row["Starts"],
             "Credit": pd.NA if row["Credit"] is None else np.int64(row["Credit"])}
            for row in EXPECTED]


@pytest.mark.parametrize("make", [_pandas, _polars, _arrow, _dicts], ids=["pandas", "polars", "arrow", "dicts"])
def test_every_kind_of_table_gives_the_same_cells(make: Any) -> None:
    source = table_of("units", make())
    assert [dict(row) for row in source.given] == EXPECTED
    read = KINDS["table"].read(source, "units (table)", None, Wanted())
    assert read.rows[0].values == COLUMNS


def test_a_nullable_integer_column_with_a_gap_gives_whole_numbers_never_a_fraction() -> None:
    frame = pd.DataFrame({"Credit": [10, None, 12]})  # plain pandas makes it float64: 10.0, NaN, 12.0
    assert [row["Credit"] for row in table_of("t", frame).given] == [10, None, 12]


def test_categoricals_are_text_also_when_their_categories_are_numbers() -> None:
    frame = pd.DataFrame({"Level": pd.Categorical([1, 2, None])})
    assert [row["Level"] for row in table_of("t", frame).given] == ["1", "2", None]
    arrow = pa.table({"Level": pa.array([1, 2, None]).dictionary_encode()})
    assert [row["Level"] for row in table_of("t", arrow).given] == ["1", "2", None]


def test_decimals_durations_and_time_zones_follow_the_cell_rules() -> None:
    zoned = datetime(2027, 1, 1, 0, 0, tzinfo=pd.Timestamp("2027-01-01", tz="Australia/Sydney").tzinfo)
    assert cell_of(Decimal("12.50")) == 12.5
    assert cell_of(Decimal("3.00")) == 3
    assert cell_of(pd.Timedelta(hours=36, minutes=30)) == "PT36H30M"
    assert cell_of(timedelta(hours=1)) == "PT1H"
    assert cell_of(zoned) == zoned  # a zone keeps its time: midnight somewhere is not a date
    assert cell_of(np.bool_(True)) is True and cell_of(np.float64(7.0)) == 7


def test_an_empty_frame_keeps_its_columns() -> None:
    source = table_of("units", pd.DataFrame({"Code": pd.Series([], dtype=str), "Name": pd.Series([], dtype=str)}))
    read = KINDS["table"].read(source, "units (table)", None, Wanted())
    assert read.rows[0].values == ("Code", "Name") and len(read.rows) == 1


def test_what_is_not_a_table_is_refused_saying_what_to_give() -> None:
    with pytest.raises(SheetError, match="is a int, not a table") as raised:
        table_of("units", 42)
    assert "DataFrame" in str(raised.value.hint)
    with pytest.raises(SheetError, match="row 2 of table 'units' is a str"):
        table_of("units", [{"Code": "A"}, "B"])


def test_two_columns_of_one_name_are_refused() -> None:
    frame = pd.DataFrame([[1, 2]], columns=["Code", "Code"])
    with pytest.raises(SheetError, match="two columns named 'Code'"):
        table_of("units", frame)


def test_a_value_no_cell_holds_is_refused_by_its_column() -> None:
    source = table_of("units", pd.DataFrame({"Tags": [["a", "b"]]}))
    with pytest.raises(SheetError, match="column 'Tags' holds a list"):
        KINDS["table"].read(source, "units (table)", None, Wanted())
