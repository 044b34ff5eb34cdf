"""docs/mapping-keys.md's tables are schemas/mapping.schema.json as docs/mapping_keys_page.py renders
it now, and every key in them says what it does."""

from __future__ import annotations

import copy
from types import ModuleType

from helpers.docs_scripts import docs_script


def _page_module() -> ModuleType:
    return docs_script("mapping_keys_page")


def test_the_committed_mapping_keys_page_is_current() -> None:
    page = _page_module()
    text = page.PAGE.read_text(encoding="utf-8")
    assert text == page.current_page(text), "run `python docs/mapping_keys_page.py`"


def test_every_key_of_every_table_has_a_type_and_a_description() -> None:
    page = _page_module()
    blank = [f"{table.path or 'file'}.{row.key}" for table in page.tables(page.load_schema()) for row in table.rows
             if not row.description or not row.type]
    assert blank == [], "describe these keys in schemas/mapping.schema.json"


def test_a_key_without_a_description_is_told() -> None:
    page = _page_module()
    schema = copy.deepcopy(page.load_schema())
    del schema["$defs"]["field_spec"]["properties"]["pii"]["description"]
    [row] = [row for table in page.tables(schema) for row in table.rows if row.key == "`pii`"]
    assert row.description == ""


def test_the_tables_cover_the_file_a_block_a_field_a_condition_a_check_and_a_source() -> None:
    page = _page_module()
    tables = {table.path: table for table in page.tables(page.load_schema())}
    assert {"", "entities.BLOCK", "fields.FIELD", "where", "checks[]", "sources.NAME",
            "entities.BLOCK.duplicates", "fields.FIELD.lookup"} <= set(tables)
    rows = {row.key: row for row in tables["fields.FIELD"].rows}
    assert rows["`empty`"].type == "one of `skip`, `clear`, `error`" and rows["`empty`"].default == '`"skip"`'
    assert rows["`transform`"].type.startswith("list of one of `strip`")
    assert {row.key: row.default for row in tables["entities.BLOCK"].rows}["`key`"] == "required"


def test_a_stale_page_is_told_apart() -> None:
    page = _page_module()
    text = page.PAGE.read_text(encoding="utf-8")
    stale = text.replace("Personal information", "Private information")
    assert stale != text and page.current_page(stale) == text
