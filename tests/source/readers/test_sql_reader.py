"""The SQL reader against SQLite files the tests make and a real PostgreSQL server."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from helpers import postgres

from loader.config import EnvRef
from loader.errors import ConfigError, MappingError, SheetError
from loader.source.readers.sql import SqlSource, cell_value, decimal_value, describe_database, read
from loader.source.readers.sql_statement import check_select

UNITS = [("MATH1001", "Calculus", 6, "Science", 2027), ("0851", "Old unit", 12, "Arts", 2027),
         ("HIST2002", "History", 6, "Arts", 2026)]


@pytest.fixture
def handbook(tmp_path: Path) -> Path:
    path = tmp_path / "handbook.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE units (unit_code TEXT, title TEXT, credit_points INTEGER, faculty TEXT, year INTEGER)")
        db.executemany("INSERT INTO units VALUES (?, ?, ?, ?, ?)", UNITS)
    return path


def source(tmp_path: Path, sql: str, **options: object) -> SqlSource:
    return SqlSource("handbook", sql, str(options.pop("url", "sqlite:///handbook.db")), tmp_path, **options)  # type: ignore[arg-type]


def test_a_query_reads_a_header_row_then_one_row_a_record(tmp_path: Path, handbook: Path) -> None:
    data = read(source(tmp_path, "SELECT unit_code, title, credit_points FROM units WHERE year = :year "
                       "ORDER BY unit_code", params={"year": 2027}))
    assert data.file == "handbook (query)"
    assert [(row.number, row.values) for row in data.rows] == [
        (1, ("unit_code", "title", "credit_points")), (2, ("0851", "Old unit", 12)), (3, ("MATH1001", "Calculus", 6))]


def test_columns_are_matched_case_insensitively_and_named_as_the_mapping_spells_them(
        tmp_path: Path, handbook: Path) -> None:
    data = read(source(tmp_path, "SELECT unit_code AS UNIT_CODE, title AS Title FROM units"), ["unit_code", "TITLE"])
    assert data.rows[0].values == ("unit_code", "TITLE")


def test_a_column_the_query_lacks_is_an_error_listing_its_columns(tmp_path: Path, handbook: Path) -> None:
    with pytest.raises(SheetError, match=r"no column 'faculty'; its columns are: unit_code, title") as error:
        read(source(tmp_path, "SELECT unit_code, title FROM units"), ["unit_code", "faculty"])
    assert error.value.where == "handbook (query)"


def test_params_that_read_no_rows_give_the_header_alone(tmp_path: Path, handbook: Path) -> None:
    """Whether no rows is an error is the plan's to tell, against the history (`allow_empty:`)."""
    data = read(source(tmp_path, "SELECT unit_code FROM units WHERE year = :year", params={"year": 2072}))
    assert [row.values for row in data.rows] == [("unit_code",)]


@pytest.mark.parametrize(("sql", "said"), [
    ("DELETE FROM units", "a DELETE statement, not a SELECT"),
    ("SELECT 1; DROP TABLE units", "more than one statement"),
    ("WITH gone AS (DELETE FROM units RETURNING *) SELECT * FROM gone", "holds DELETE"),
    ("SELECT * FROM units FOR UPDATE", "holds FOR UPDATE"),
    ("SELECT * INTO copy FROM units", "holds INTO"),
    ("  -- nothing\n ; ", "the query is empty"),
    ("SELECT 'unclosed FROM units", "never closed"),
])
def test_anything_but_one_select_is_refused_before_connecting(tmp_path: Path, sql: str, said: str) -> None:
    # No database file exists: the refusal comes before any connection is tried.
    with pytest.raises(SheetError, match=said) as error:
        read(source(tmp_path, sql))
    assert error.value.where == "handbook (query)"


def test_keywords_inside_strings_comments_and_quoted_names_are_no_keywords() -> None:
    check_select("""WITH t AS (SELECT 1 AS "update") -- delete me; not really
                    SELECT 'drop; delete', "update", $$insert$$ FROM t;""", "q")


def test_a_query_that_fails_gives_the_databases_message_and_the_source(tmp_path: Path, handbook: Path) -> None:
    with pytest.raises(SheetError, match=r"the query failed: no such column: nope") as error:
        read(source(tmp_path, "SELECT nope FROM units"))
    assert error.value.where == "handbook (query)"
    assert "Traceback" not in str(error.value) and "[SQL:" not in str(error.value)


def test_a_sqlite_file_is_relative_to_the_mapping_and_never_created(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match="no SQLite database file at"):
        read(source(tmp_path, "SELECT 1 AS one", url="sqlite:///missing.db"))
    assert not (tmp_path / "missing.db").exists()


def test_a_sqlite_query_stops_at_its_timeout(tmp_path: Path, handbook: Path) -> None:
    forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) AS c FROM n"
    with pytest.raises(SheetError, match="interrupted"):
        read(source(tmp_path, forever, timeout_s=0.2))


def test_the_url_comes_from_the_environment_and_its_password_is_never_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CURRICULUM_DB_URL", "postgresql://reader:S3cretPassw0rd@127.0.0.1:1/curriculum")
    env_source = SqlSource("handbook", "SELECT 1 AS one", EnvRef("CURRICULUM_DB_URL"), tmp_path, timeout_s=2)
    assert "S3cretPassw0rd" not in describe_database(env_source)
    assert "reader:***@127.0.0.1" in describe_database(env_source)
    with pytest.raises(SheetError) as error:
        read(env_source)  # nothing listens on port 1
    assert "S3cretPassw0rd" not in str(error.value) and "the query failed" in str(error.value)


def test_a_password_written_in_the_mapping_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MappingError, match="must not hold a password"):
        read(source(tmp_path, "SELECT 1 AS one", url="postgresql://reader:pw@127.0.0.1/db"))


def test_an_unset_url_variable_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment variable LOADER_NO_SUCH_URL"):
        read(SqlSource("handbook", "SELECT 1 AS one", EnvRef("LOADER_NO_SUCH_URL"), tmp_path))


def test_database_values_follow_the_cell_rules() -> None:
    assert [decimal_value(Decimal(t)) for t in ("6.00", "12.50", "0.10000000000000000001", "-3")] == [
        6, 12.5, "0.10000000000000000001", -3]
    assert cell_value(datetime(2027, 2, 1), ["d"], 0, "q") == date(2027, 2, 1)
    assert cell_value(datetime(2027, 2, 1, 9, 30), ["d"], 0, "q") == datetime(2027, 2, 1, 9, 30)
    assert cell_value(timedelta(hours=36, minutes=30), ["d"], 0, "q") == "PT36H30M"
    assert cell_value(7.0, ["n"], 0, "q") == 7 and cell_value("", ["t"], 0, "q") is None
    with pytest.raises(SheetError, match="the column 'blob' holds bytes values"):
        cell_value(b"\x00", ["blob"], 0, "q")


@pytest.fixture(scope="module")
def postgres_units(postgres_url: str) -> str:
    postgres.run_sql(
        postgres_url, "DROP TABLE IF EXISTS units; DROP SEQUENCE IF EXISTS ids", "CREATE SEQUENCE ids",
        "CREATE TABLE units (unit_code text, credit_points numeric(6,2), weight numeric, starts timestamp, "
        "updated timestamptz, big int)",
        "INSERT INTO units VALUES ('MATH1001', 6.00, 0.10000000000000000001, '2027-02-01 00:00', "
        "'2027-02-01 09:30+00', 1), ('0851', 12.50, 2, '2027-03-01 08:15:30', NULL, 2)",
        "INSERT INTO units (unit_code, big) SELECT 'U' || i, i FROM generate_series(3, 5000) i")
    return postgres_url


def test_postgresql_numeric_and_timestamp_columns_follow_the_cell_rules(tmp_path: Path, postgres_units: str) -> None:
    data = read(SqlSource("handbook", "SELECT unit_code, credit_points, weight, starts, updated AT TIME ZONE 'UTC' "
                          "AS updated, (updated) AS zoned FROM units WHERE big <= 2 ORDER BY big",
                          postgres_units, tmp_path))
    assert data.rows[1].values[:5] == ("MATH1001", 6, "0.10000000000000000001", date(2027, 2, 1),
                                       datetime(2027, 2, 1, 9, 30))
    zoned = data.rows[1].values[5]
    assert isinstance(zoned, datetime) and zoned.astimezone(UTC) == datetime(2027, 2, 1, 9, 30,
                                                                                          tzinfo=UTC)
    assert data.rows[2].values[:4] == ("0851", 12.5, 2, datetime(2027, 3, 1, 8, 15, 30))


def test_postgresql_rows_are_streamed_in_batches_and_all_read(tmp_path: Path, postgres_units: str) -> None:
    data = read(SqlSource("handbook", "SELECT big FROM units ORDER BY big", postgres_units, tmp_path))
    assert [row.values[0] for row in data.rows[1:]] == list(range(1, 5001))


def test_postgresql_reads_in_a_read_only_transaction(tmp_path: Path, postgres_units: str) -> None:
    with pytest.raises(SheetError, match="read-only transaction"):
        read(SqlSource("handbook", "SELECT nextval('ids') AS n", postgres_units, tmp_path))


def test_postgresql_stops_a_query_at_its_timeout(tmp_path: Path, postgres_units: str) -> None:
    with pytest.raises(SheetError, match="statement timeout"):
        read(SqlSource("handbook", "SELECT pg_sleep(5) AS s", postgres_units, tmp_path, timeout_s=0.2))


def test_a_postgresql_error_names_the_source_without_a_traceback(tmp_path: Path, postgres_units: str) -> None:
    with pytest.raises(SheetError, match='the query failed: column "nope" does not exist') as error:
        read(SqlSource("handbook", "SELECT nope FROM units", postgres_units, tmp_path))
    assert error.value.where == "handbook (query)"


def test_a_parameter_the_mapping_does_not_give_is_named(tmp_path: Path, handbook: Path) -> None:
    with pytest.raises(SheetError, match=r"the query failed: .*bind parameter 'year'") as error:
        read(source(tmp_path, "SELECT unit_code FROM units WHERE year = :year"))
    assert "[SQL:" not in str(error.value)


def test_no_postgresql_skips_the_sql_tests_here_and_fails_them_under_ci() -> None:
    """CI installs PostgreSQL (.ci/run): a SQL test skipped there would pass while never run."""
    with pytest.raises(pytest.fail.Exception, match=r"CI runs the SQL tests against PostgreSQL.*no initdb"):
        postgres.unavailable("no initdb", ci=True)
    with pytest.raises(pytest.skip.Exception, match="no initdb"):
        postgres.unavailable("no initdb", ci=False)
    ci_script = (Path(__file__).parents[3] / ".ci" / "run").read_text("utf-8")
    assert "apt-get install -y -qq postgresql" in ci_script
